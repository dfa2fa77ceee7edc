# BPF datapath: struct_ops congestion controls mltcp / mltcp_cubic, the
# cgroup sock_ops selector, libmltcp (hints) and mltcpctl.  Built by CMake
# (bpf/, tools/mltcpctl/); tests run as root on the host kernel.
#
#   make check-bpf     host-kernel tests (~80 s; root; holds the host lock)
#   make check-bpf-vm  load/select/unload on Debian 12's 6.1 in the VM (~15 s)
#   make bench-bpf     throughput and sender CPU/GB vs reno and cubic, and the
#                      cgroup attachment vs setsockopt (~4 min)

CHECK_TARGETS += check-bpf check-bpf-vm

BPF_TEST_ENV := BUILD=$(BUILD) MLTCPCTL=$(BUILD)/cmake/tools/mltcpctl/mltcpctl \
                MLTCP_LIBRARY=$(BUILD)/cmake/bpf/libmltcp.so.0

.PHONY: check-bpf check-bpf-vm bench-bpf

check-bpf: cmake-build
	$(BPF_TEST_ENV) $(ROOT)/tests/bpf/run_tests.sh

bench-bpf: cmake-build
	$(BPF_TEST_ENV) /usr/bin/python3 $(ROOT)/tests/bpf/bench_bpf.py

# The same BPF objects on Debian 12's kernel 6.1, in the VM rig of
# tests/vm/run.sh (qemu TCG, ~15 s; its packages come from mk/kmod.mk).
check-bpf-vm: cmake-build
	BUILD=$(BUILD) $(ROOT)/tests/vm/run.sh --name bpf --timeout 120 \
	    --add $(BUILD)/cmake/tools/mltcpctl/mltcpctl \
	    --expect bpf-load --expect bpf-select --expect bpf-unload \
	    $(ROOT)/tests/bpf/guest-load-test.sh
