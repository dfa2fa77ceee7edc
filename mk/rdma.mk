# RDMA datapath (rdma/): mltcp-rdma over rdma-core with software pacing by
# the core's DCQCN reaction point, and mltcp-dcqcnd for firmware DCQCN.
#
#   make check-rdma       host tests (pacer/adapter unit tests, mltcp-dcqcnd on
#                         mirrored debugfs cc_params/ and MLNX_OFED sysfs trees,
#                         no-device errors), then the
#                         soft-RoCE tests in the VM rig (tests/rdma/guest/),
#                         ending with the judged two-job interleaving run
#   make bench-rdma       paced-rate accuracy, CNP round trip and two-job
#                         interleaving in the guest; ends in RESULT lines

DEB_PACKAGES  += libibverbs-dev librdmacm-dev rdma-core ibverbs-providers libpcap-dev zlib1g-dev \
                 rdmacm-utils ibverbs-utils libbpf-dev bpftool clang iproute2 \
                 qemu-system-x86 busybox-static cpio kmod linux-headers-amd64 tcpdump
CHECK_TARGETS += check-rdma

RDMA_VM_RUN   := $(ROOT)/tests/vm/run.sh
RDMA_BIN      := $(BUILD)/cmake/rdma/mltcp-rdma
RDMA_LIBDIR   := /usr/lib/$(shell gcc -dumpmachine)/libibverbs
RDMA_VM_ADDS   = --add $(RDMA_BIN):/mltcp/bin/mltcp-rdma \
                 --add $(RDMA_LIBDIR)/librxe-rdmav34.so:$(RDMA_LIBDIR)/librxe-rdmav34.so \
                 --add /etc/libibverbs.d/rxe.driver:/etc/libibverbs.d/rxe.driver \
                 --add /usr/bin/rdma:/usr/bin/rdma \
                 --add /usr/bin/tcpdump:/usr/sbin/tcpdump \
                 --add $(ROOT)/tests/rdma/guest/rdma_lib.sh:/mltcp/rdma_lib.sh
RDMA_VM_MODS  := rdma_rxe crc32_generic ib_uverbs rdma_ucm sch_red sch_htb sch_ingress cls_bpf cls_u32 bridge veth
RDMA_VM_TIMEOUT ?= 330

.PHONY: check-rdma check-rdma-host check-rdma-vm bench-rdma

check-rdma: check-rdma-host check-rdma-vm

check-rdma-host: cmake-build
	$(call ctest_area,$(BUILD)/cmake,rdma)

check-rdma-vm: cmake-build
	@test -x $(RDMA_BIN) || { echo "check-rdma-vm: $(RDMA_BIN) not built (libibverbs-dev/librdmacm-dev missing? run make deps)" >&2; exit 1; }
	BUILD=$(BUILD) $(RDMA_VM_RUN) --name rdma --timeout $(RDMA_VM_TIMEOUT) \
	    --extra-modules "$(RDMA_VM_MODS)" $(RDMA_VM_ADDS) \
	    --expect rdma-no-device --expect rdma-setup --expect rdma-capacity --expect rdma-paced-transfer \
	    --expect rdma-unknown-device --expect rdma-connection-refused \
	    --expect rdma-server-gone --expect rdma-client-gone --expect rdma-resources-released \
	    --expect rdma-cnp-dcqcn --expect rdma-icrc \
	    --expect rdma-interleave-isolated --expect rdma-interleave-dcqcn \
	    --expect rdma-interleave-mltcp_dcqcn --expect rdma-interleave-judge \
	    --add $(ROOT)/tests/rdma/guest/interleave.sh:/mltcp/interleave.sh \
	    $(ROOT)/tests/rdma/guest/rdma.sh

# Figures in the guest: paced-rate accuracy, CNP round trip, two-job
# interleaving with dcqcn and mltcp_dcqcn (about 4 minutes under TCG).
bench-rdma: cmake-build
	@test -x $(RDMA_BIN) || { echo "bench-rdma: $(RDMA_BIN) not built" >&2; exit 1; }
	BUILD=$(BUILD) $(RDMA_VM_RUN) --name bench-rdma --timeout 420 \
	    --extra-modules "$(RDMA_VM_MODS)" $(RDMA_VM_ADDS) \
	    --add $(ROOT)/tests/rdma/guest/interleave.sh:/mltcp/interleave.sh \
	    $(ROOT)/tests/rdma/guest/bench.sh
	@grep -h '^RESULT ' $(BUILD)/vm/bench-rdma.log
