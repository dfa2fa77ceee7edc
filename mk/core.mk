# Core: unit tests (plain, then ASan+UBSan), a bounded libFuzzer run, the
# three-world compile check (C++, BPF, kbuild) and the per-ack benchmark.

DEB_PACKAGES  += linux-headers-amd64 libbpf-dev
CHECK_TARGETS += check-core
FUZZ_SECONDS  ?= 30
KDIR_DEBIAN   ?= $(firstword $(wildcard /usr/src/linux-headers-*-amd64))

.PHONY: check-core check-core-unit check-core-sanitize check-core-fuzz \
        check-core-worlds bench-core

check-core: check-core-unit check-core-sanitize check-core-fuzz check-core-worlds

check-core-unit: cmake-build
	$(call ctest_area,$(BUILD)/cmake,core)

$(BUILD)/sanitize/CMakeCache.txt:
	@mkdir -p $(BUILD)/sanitize
	CC=clang CXX=clang++ cmake -S $(ROOT) -B $(BUILD)/sanitize \
	    -DCMAKE_BUILD_TYPE=Debug -DMLTCP_SANITIZE=ON -DMLTCP_CORE_ONLY=ON >/dev/null

check-core-sanitize: $(BUILD)/sanitize/CMakeCache.txt
	cmake --build $(BUILD)/sanitize -j$(JOBS) --target core_tests
	$(call ctest_area,$(BUILD)/sanitize,core)

$(BUILD)/fuzz/core_fuzz: $(ROOT)/tests/core/core_fuzz.cpp $(wildcard $(ROOT)/core/*.h)
	@mkdir -p $(BUILD)/fuzz/corpus
	clang++ -std=c++17 -O1 -g -Wall -Wextra -Werror -I$(ROOT)/core \
	    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	    $< -o $@

check-core-fuzz: $(BUILD)/fuzz/core_fuzz
	$(BUILD)/fuzz/core_fuzz -max_total_time=$(FUZZ_SECONDS) -max_len=4096 \
	    -print_final_stats=1 -artifact_prefix=$(BUILD)/fuzz/ $(BUILD)/fuzz/corpus 2>&1 | tail -n 12
	@echo "fuzz: no invariant violation in $(FUZZ_SECONDS) s"

# The core compiled unchanged as BPF and as a kernel module.
check-core-worlds:
	@mkdir -p $(BUILD)/worlds
	clang -O2 -g -target bpf -Wall -Wextra -Werror \
	    -I/usr/include/$(shell gcc -dumpmachine) -I$(ROOT)/core \
	    -c $(ROOT)/tests/worlds/core_world.bpf.c -o $(BUILD)/worlds/core_world.bpf.o
	@echo "worlds: BPF object built: $(BUILD)/worlds/core_world.bpf.o"
	@test -n "$(KDIR_DEBIAN)" || { echo "no Debian kernel headers (linux-headers-amd64)"; exit 1; }
	rm -rf $(BUILD)/worlds/kbuild && cp -r $(ROOT)/tests/worlds/kbuild $(BUILD)/worlds/kbuild
	$(MAKE) -C $(KDIR_DEBIAN) M=$(BUILD)/worlds/kbuild MLTCP_CORE=$(ROOT)/core \
	    KCFLAGS=-Werror modules 2>&1 | tee $(BUILD)/worlds/kbuild.log
	@! grep -q -i 'warning:' $(BUILD)/worlds/kbuild.log
	@test -f $(BUILD)/worlds/kbuild/mltcp_core_world.ko
	@echo "worlds: kernel module built against $(notdir $(KDIR_DEBIAN)): mltcp_core_world.ko"

bench-core: cmake-configure
	cmake --build $(BUILD)/cmake -j$(JOBS) --target core_bench
	$(BUILD)/cmake/tests/core/core_bench
