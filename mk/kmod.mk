# Kernel module tcp_mltcp.ko ("mltcp", "mltcp_cubic"), built against Debian's
# kernel headers, and the VM rig that tests it on Debian's own 6.1 kernel
# under qemu TCG (this host's kernel cannot load modules).
#
#   make kmod        build build/kmod/tcp_mltcp.ko (warnings are errors)
#   make vm-test     boot the guest and run tests/vm/guest/kmod.sh (in check)
#   make bench-kmod  mltcp vs reno, mltcp_cubic vs cubic in the guest

DEB_PACKAGES  += linux-headers-amd64 qemu-system-x86 busybox-static cpio kmod \
                 dkms ethtool iproute2 file
CHECK_TARGETS += vm-test
CLEAN_DIRS    +=

# The headers linux-headers-amd64 points at: the VM boots the matching image.
KMOD_ABI  := $(shell dpkg-query -W -f='$${Depends}' linux-headers-amd64 2>/dev/null | \
               sed -n 's/.*linux-headers-\([0-9][^ ]*-amd64\) .*/\1/p')
KMOD_KDIR ?= /usr/src/linux-headers-$(KMOD_ABI)
KMOD_OUT  := $(BUILD)/kmod
KMOD_KO   := $(KMOD_OUT)/tcp_mltcp.ko
VM_TOOL   := $(BUILD)/vm/mltcp_vmtool
VM_RUN    := $(ROOT)/tests/vm/run.sh
VM_TIMEOUT ?= 170

# Optional guest step for the BPF issue: its objects and mltcpctl, when built.
VM_BPF_TEST := $(ROOT)/tests/bpf/guest-load-test.sh
VM_MLTCPCTL := $(BUILD)/cmake/tools/mltcpctl/mltcpctl
VM_BPF_ADDS  = $(if $(and $(wildcard $(VM_BPF_TEST)),$(wildcard $(VM_MLTCPCTL))),\
               --add $(ROOT)/tests/bpf:/mltcp/bpf --add $(VM_MLTCPCTL):/mltcp/bin/mltcpctl \
               $(if $(wildcard $(BUILD)/bpf),--add $(BUILD)/bpf:/mltcp/bpf/objs))

.PHONY: kmod vm-tools vm-test bench-kmod

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
	gcc -static -O2 -Wall -Wextra -Werror -I$(ROOT)/kmod $< -o $@

VM_COMMON = --ko $(KMOD_KO) --add $(VM_TOOL) --add $(shell command -v ethtool || echo /usr/sbin/ethtool):/usr/sbin/ethtool

vm-test: kmod vm-tools
	BUILD=$(BUILD) $(VM_RUN) --name kmod --timeout $(VM_TIMEOUT) $(VM_COMMON) $(VM_BPF_ADDS) \
	    --expect load-modprobe --expect iterations-mltcp --expect dmesg-clean \
	    $(ROOT)/tests/vm/guest/kmod.sh

bench-kmod: kmod vm-tools
	BUILD=$(BUILD) $(VM_RUN) --name bench-kmod --timeout 300 $(VM_COMMON) \
	    $(ROOT)/tests/vm/guest/bench.sh
	@grep -h '^RESULT ' $(BUILD)/vm/bench-kmod.log
