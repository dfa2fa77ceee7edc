# DPDK transport (dpdk_transport/, issue 7): protocol-engine unit tests
# (plain, then ASan+UBSan), bad-input errors, two-process transfers over
# net_memif and over net_af_packet across a veth pair (0/1/5 % loss plus
# reordering, SHA-256 and exactly-once in-order checks), and two emulated
# jobs through the userspace bottleneck switch (functional, mltcp_dcqcn).
# Transfers are 1 GB per loss rate over memif, 256 MB over af_packet
# (check-dpdk-full: 1 GB there too).  About 3 minutes in all.
# check-dpdk-interleave-all judges interleaving (mltcp vs reno, mltcp_dcqcn
# vs dcqcn); it is load-sensitive, so it is not part of make check.

DEB_PACKAGES  += dpdk-dev libdpdk-dev libssl-dev iproute2 util-linux
CHECK_TARGETS += check-dpdk
DPDK_BIN      := $(BUILD)/cmake/dpdk_transport/mltcp-dpdk
DPDK_ASAN_DIR := $(BUILD)/dpdk-asan
DPDK_ENGINE_SRC := $(addprefix $(ROOT)/dpdk_transport/,wire.cpp cc.cpp engine.cpp)
DPDK_1GB      := 0:1000000000 0.01:1000000000 0.05:1000000000

.PHONY: check-dpdk check-dpdk-unit check-dpdk-asan check-dpdk-badinput \
        check-dpdk-transfer check-dpdk-full check-dpdk-interleave \
        check-dpdk-interleave-all bench-dpdk

check-dpdk: check-dpdk-unit check-dpdk-asan check-dpdk-badinput check-dpdk-transfer \
            check-dpdk-interleave

check-dpdk-unit: cmake-build
	cd $(BUILD)/cmake && ctest --output-on-failure -L dpdk

# The engine and its tests with AddressSanitizer (leaks included) and UBSan.
$(DPDK_ASAN_DIR)/dpdk_engine_tests: $(DPDK_ENGINE_SRC) $(ROOT)/tests/dpdk/engine_test.cpp \
		$(wildcard $(ROOT)/dpdk_transport/*.h $(ROOT)/tests/dpdk/*.h $(ROOT)/core/*.h)
	@mkdir -p $(DPDK_ASAN_DIR)
	clang++ -std=c++17 -O1 -g -Wall -Wextra -Werror -fno-omit-frame-pointer \
	    -fsanitize=address,undefined -fno-sanitize-recover=all \
	    -I$(ROOT)/core -I$(ROOT)/dpdk_transport -I$(ROOT)/tests/dpdk \
	    $(DPDK_ENGINE_SRC) $(ROOT)/tests/dpdk/engine_test.cpp \
	    -lgtest_main -lgtest -pthread -o $@

check-dpdk-asan: $(DPDK_ASAN_DIR)/dpdk_engine_tests
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 $< --gtest_brief=1

check-dpdk-badinput: cmake-build
	$(ROOT)/tests/dpdk/bad_input_test.sh $(DPDK_BIN)

check-dpdk-transfer: cmake-build
	$(ROOT)/tests/dpdk/transfer_test.sh $(DPDK_BIN) all

check-dpdk-full: cmake-build
	MLTCP_DPDK_BYTES="$(DPDK_1GB)" MLTCP_DPDK_BYTES_AF_PACKET="$(DPDK_1GB)" \
	    $(ROOT)/tests/dpdk/transfer_test.sh $(DPDK_BIN) all

# Functional run in make check (~30 s): switch, emulators, ECN marks, CNPs.
check-dpdk-interleave: cmake-build
	MLTCP_DPDK_ITERS=15 MLTCP_DPDK_WARMUP=5 MLTCP_DPDK_REQUIRE_MARKS=1 \
	    $(ROOT)/tests/dpdk/interleave_test.sh $(BUILD)/cmake mltcp_dcqcn

# The interleaving judgement (~2 min, load-sensitive: see docs/dpdk.md).
check-dpdk-interleave-all: cmake-build
	MLTCP_DPDK_CHECK=1 MLTCP_DPDK_REQUIRE_MARKS=1 \
	    $(ROOT)/tests/dpdk/interleave_test.sh $(BUILD)/cmake

bench-dpdk: cmake-build
	$(ROOT)/tests/dpdk/bench.sh $(BUILD)/cmake
	$(ROOT)/tests/dpdk/interleave_test.sh $(BUILD)/cmake
