# Kernel module tcp_mltcp.ko ("mltcp", "mltcp_cubic"), built against Debian's
# kernel headers, and the VM rig that tests it on Debian's own 6.1 kernel
# under qemu TCG (this host's kernel cannot load modules).
#
#   make kmod             build build/kmod/tcp_mltcp.ko (warnings are errors)
#   make vm-test          boot the guest, run tests/vm/guest/kmod.sh (in check;
#                         about 1 min; qemu is a plain process, no host state)
#   make check-kmod-dkms  DKMS add/build/install/remove (in check; host lock)
#   make bench-kmod       mltcp vs reno, mltcp_cubic vs cubic in the guest
#   make bench-interleave-vm  two identical training jobs (mltcp-emu) per
#                         congestion control in the guest: tbf + netem RTT,
#                         interleave.py's analysis (~6 min; VM_IL_REPS,
#                         VM_IL_CCS, VM_IL_ITERATIONS, VM_IL_OUT, VM_IL_ARGS)

DEB_PACKAGES  += linux-headers-amd64 qemu-system-x86 busybox-static cpio kmod \
                 dkms ethtool iproute2 file
CHECK_TARGETS += vm-test
ALL_TARGETS   += kmod

# The headers linux-headers-amd64 points at: the VM boots the matching image.
KMOD_ABI  := $(shell dpkg-query -W -f='$${Depends}' linux-headers-amd64 2>/dev/null | \
               sed -n 's/.*linux-headers-\([0-9][^ ]*-amd64\) .*/\1/p')
KMOD_KDIR ?= /usr/src/linux-headers-$(KMOD_ABI)
KMOD_OUT  := $(BUILD)/kmod
KMOD_KO   := $(KMOD_OUT)/tcp_mltcp.ko
VM_TOOL   := $(BUILD)/vm/mltcp_vmtool
VM_RUN    := $(ROOT)/tests/vm/run.sh
VM_TIMEOUT ?= 240

# Optional guest step for the BPF issue: tests/bpf/guest-load-test.sh with
# mltcpctl (its BPF objects are embedded skeletons), decided when vm-test
# runs, after the BPF area's checks have built it.
VM_BPF_TEST := $(ROOT)/tests/bpf/guest-load-test.sh
VM_MLTCPCTL := $(BUILD)/cmake/tools/mltcpctl/mltcpctl

.PHONY: kmod vm-tools vm-replay vm-test bench-kmod

kmod: $(KMOD_KO)

$(KMOD_KO): $(ROOT)/kmod/tcp_mltcp.c $(ROOT)/kmod/tcp_mltcp_info.h $(ROOT)/kmod/Kbuild \
            $(ROOT)/kmod/Makefile $(wildcard $(ROOT)/core/*.h)
	@test -n "$(KMOD_ABI)" -a -d "$(KMOD_KDIR)" || \
	    { echo "kmod: Debian kernel headers missing (linux-headers-amd64; run make deps)" >&2; exit 1; }
	@mkdir -p $(KMOD_OUT)
	$(MAKE) --no-print-directory -C $(ROOT)/kmod KDIR=$(KMOD_KDIR) KMOD_OUT=$(KMOD_OUT) \
	    KCFLAGS=-Werror modules 2>&1 | tee $(KMOD_OUT)/build.log
	@! grep -i 'warning:' $(KMOD_OUT)/build.log
	@test -f $@ && echo "kmod: built $@ against $(notdir $(KMOD_KDIR))"

vm-tools: $(VM_TOOL)

$(VM_TOOL): $(ROOT)/tests/vm/tools/mltcp_vmtool.c $(ROOT)/kmod/tcp_mltcp_info.h
	@mkdir -p $(dir $@)
	gcc -static -O2 -Wall -Wextra -Werror -pthread -I$(ROOT)/kmod $< -o $@

# Same-input agreement: events and userspace decisions made on the host, the
# test-only replay module built like tcp_mltcp.ko; all go to /mltcp/replay.
VM_REPLAY     := $(BUILD)/vm/replay
VM_REPLAY_SRC := $(ROOT)/tests/vm/replay
REPLAY_SEED   ?= 20241130
REPLAY_FLOWS  ?= 24

$(VM_REPLAY)/mltcp_replay: $(VM_REPLAY_SRC)/mltcp_replay.cpp $(VM_REPLAY_SRC)/mltcp_replay.h $(wildcard $(ROOT)/core/*.h)
	@mkdir -p $(dir $@)
	g++ -std=c++17 -O2 -Wall -Wextra -Werror -I$(ROOT)/core -I$(VM_REPLAY_SRC) $< -o $@

$(VM_REPLAY)/expected.bin: $(VM_REPLAY)/mltcp_replay
	$< gen $(REPLAY_SEED) $(REPLAY_FLOWS) >$(VM_REPLAY)/events.bin
	$< summary $(VM_REPLAY)/events.bin >$(VM_REPLAY)/summary.txt
	$< run $(VM_REPLAY)/events.bin >$@

$(VM_REPLAY)/mltcp_replay_kmod.ko: $(VM_REPLAY_SRC)/mltcp_replay_kmod.c $(VM_REPLAY_SRC)/mltcp_replay.h \
                                   $(VM_REPLAY_SRC)/Kbuild $(wildcard $(ROOT)/core/*.h)
	@mkdir -p $(VM_REPLAY)/kbuild
	cp $(VM_REPLAY_SRC)/Kbuild $(VM_REPLAY_SRC)/mltcp_replay_kmod.c $(VM_REPLAY_SRC)/mltcp_replay.h $(VM_REPLAY)/kbuild/
	$(MAKE) --no-print-directory -C $(KMOD_KDIR) M=$(VM_REPLAY)/kbuild MLTCP_CORE=$(ROOT)/core \
	    KCFLAGS=-Werror modules 2>&1 | tee $(VM_REPLAY)/kbuild.log
	@! grep -i 'warning:' $(VM_REPLAY)/kbuild.log
	cp $(VM_REPLAY)/kbuild/mltcp_replay_kmod.ko $@

vm-replay: $(VM_REPLAY)/expected.bin $(VM_REPLAY)/mltcp_replay_kmod.ko

VM_COMMON = --ko $(KMOD_KO) --add $(VM_TOOL) --add $(shell command -v ethtool || echo /usr/sbin/ethtool):/usr/sbin/ethtool

vm-test: kmod vm-tools vm-replay
	@if [ -f $(BUILD)/cmake/CMakeCache.txt ] && [ -f $(VM_BPF_TEST) ]; then \
	    cmake --build $(BUILD)/cmake --target mltcpctl >/dev/null 2>&1 || \
	    echo "vm-test: mltcpctl does not build; the guest skips the BPF step"; fi
	bpf_adds=; if [ -f $(VM_BPF_TEST) ] && [ -x $(VM_MLTCPCTL) ]; then \
	    bpf_adds="--add $(ROOT)/tests/bpf:/mltcp/bpf --add $(VM_MLTCPCTL):/mltcp/bin/mltcpctl"; fi; \
	BUILD=$(BUILD) $(VM_RUN) --name kmod --timeout $(VM_TIMEOUT) $(VM_COMMON) $$bpf_adds \
	    --add $(VM_REPLAY)/events.bin:/mltcp/replay/events.bin \
	    --add $(VM_REPLAY)/expected.bin:/mltcp/replay/expected.bin \
	    --add $(VM_REPLAY)/summary.txt:/mltcp/replay/summary.txt \
	    --add $(VM_REPLAY)/mltcp_replay_kmod.ko:/mltcp/replay/mltcp_replay_kmod.ko \
	    --expect load-modprobe --expect iterations-mltcp --expect iterations-mltcp_cubic \
	    --expect bulk-mltcp --expect bulk-mltcp_cubic --expect replay-agreement --expect dmesg-clean \
	    $(ROOT)/tests/vm/guest/kmod.sh

bench-kmod: kmod vm-tools
	BUILD=$(BUILD) $(VM_RUN) --name bench-kmod --timeout 300 $(VM_COMMON) \
	    $(ROOT)/tests/vm/guest/bench.sh
	@grep -h '^RESULT ' $(BUILD)/vm/bench-kmod.log

# The interleaving benchmark of issue 5 with the kernel module and a real RTT
# (tools/bench/interleave_vm.py; guest side tests/vm/guest/interleave.sh,
# profile tests/vm/interleave.prof).  mltcp-emu only, not all of cmake-build.
VM_IL_REPS       ?= 5
VM_IL_ITERATIONS ?= 30
VM_IL_CCS        ?= reno cubic mltcp mltcp_cubic
VM_IL_OUT        ?= $(BUILD)/bench-interleave-vm/$(shell date -u +%Y%m%d-%H%M%S)
VM_IL_ARGS       ?=

.PHONY: bench-interleave-vm
bench-interleave-vm: kmod vm-tools cmake-configure
	cmake --build $(BUILD)/cmake --target mltcp-emu mltcp-metrics
	BUILD=$(BUILD) /usr/bin/python3 $(ROOT)/tools/bench/interleave_vm.py --out $(VM_IL_OUT) \
	    --emu $(BUILD)/cmake/tools/emu/mltcp-emu --metrics $(BUILD)/cmake/workload/mltcp-metrics \
	    --ko $(KMOD_KO) --vmtool $(VM_TOOL) \
	    --ethtool $(shell command -v ethtool || echo /usr/sbin/ethtool) \
	    --reps $(VM_IL_REPS) --iterations $(VM_IL_ITERATIONS) --ccs "$(VM_IL_CCS)" $(VM_IL_ARGS)

# DKMS packaging: add/build/install/remove for Debian's kernel ABI (host lock).
CHECK_TARGETS += check-kmod-dkms
.PHONY: check-kmod-dkms
check-kmod-dkms:
	$(ROOT)/tests/vm/dkms-check.sh $(KMOD_ABI)
