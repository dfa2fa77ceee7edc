# Operations (issue 19): what an operator installs, runs and watches.
# docs/operations.md is the operator's guide.
#
#   make deb                    Debian packages from debian/ into build/deb/
#                               (dpkg-buildpackage -b from a clean copy of the
#                               tree, then lintian; ~1 min)
#   make check-ops-concurrency  state-changing mltcpctl commands run at once
#                               keep each other's work (root; host lock; ~5 s)
#   make check-ops-exporter     mltcpctl exporter scraped by a real Prometheus
#                               during MLTCP traffic (root; host lock; ~20 s)
#   make check-ops-service      mltcp.service's Exec lines from the build tree,
#                               mltcp.conf good and bad (root; host lock; ~5 s)
#   make check-ops-deb          build the packages, dpkg -i them on this host,
#                               test the installed files, purge, nothing left
#                               (root; host lock; ~75 s)

CHECK_TARGETS += check-ops-concurrency check-ops-exporter check-ops-service check-ops-deb

OPS_CTL := $(BUILD)/cmake/tools/mltcpctl/mltcpctl

.PHONY: deb check-ops-concurrency check-ops-exporter check-ops-service check-ops-deb

check-ops-concurrency: cmake-build
	BUILD=$(BUILD) MLTCPCTL=$(OPS_CTL) $(ROOT)/tests/bpf/concurrency_test.sh

check-ops-exporter: cmake-build
	BUILD=$(BUILD) MLTCPCTL=$(OPS_CTL) $(ROOT)/tests/bpf/exporter_test.sh

check-ops-service: cmake-build
	BUILD=$(BUILD) MLTCPCTL=$(OPS_CTL) $(ROOT)/tests/bpf/service_test.sh

check-ops-deb:
	BUILD=$(BUILD) $(ROOT)/tests/deb/deb_test.sh

deb:
	$(ROOT)/tools/build-debs.sh $(BUILD)/deb
