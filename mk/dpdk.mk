# DPDK transport (dpdk_transport/, issue 7): protocol-engine unit tests
# (plain, then ASan+UBSan), bad-input errors, two-process transfers over
# net_memif and over net_af_packet across a veth pair (0/1/5 % loss plus
# reordering, SHA-256 and exactly-once in-order checks), and the
# interleaving judgement through the userspace bottleneck switch: mltcp vs
# reno and mltcp_dcqcn vs dcqcn (docs/dpdk.md, "Interleaving through the
# switch").  Transfers are 1 GB per loss rate over memif, 256 MB over
# af_packet (check-dpdk-full: 1 GB there too).  About 5 minutes in all.

CHECK_TARGETS += check-dpdk
DPDK_BIN      := $(BUILD)/cmake/dpdk_transport/mltcp-dpdk
DPDK_ASAN_DIR := $(BUILD)/dpdk-asan
DPDK_ENGINE_SRC := $(addprefix $(ROOT)/dpdk_transport/,wire.cpp cc.cpp engine.cpp)
DPDK_1GB      := 0:1000000000 0.01:1000000000 0.05:1000000000

.PHONY: check-dpdk check-dpdk-unit check-dpdk-asan check-dpdk-badinput \
        check-dpdk-transfer check-dpdk-full check-dpdk-interleave bench-dpdk

check-dpdk: check-dpdk-unit check-dpdk-asan check-dpdk-badinput check-dpdk-transfer \
            check-dpdk-interleave

check-dpdk-unit: cmake-build
	$(call ctest_area,$(BUILD)/cmake,dpdk)

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

# The interleaving judgement (~4 min): both pairs, each on its testbed,
# 5 runs each alternating with the base control; the MLTCP
# control's median overlap (window) or ratio (rate) at most the testbed's
# bound and the base control's above it, the ECN path exercised in every
# run; skipped, with a message, on a host too loaded to judge (a job alone
# too slow before or after).
check-dpdk-interleave: cmake-build
	MLTCP_DPDK_CHECK=1 $(ROOT)/tests/dpdk/interleave_test.sh $(BUILD)/cmake

bench-dpdk: cmake-build
	$(ROOT)/tests/dpdk/bench.sh $(BUILD)/cmake
	$(ROOT)/tests/dpdk/interleave_test.sh $(BUILD)/cmake
