// rx_log.cpp - received bytes per job per time bin (rx_log.h).
#include "rx_log.h"

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "emu_util.h"

namespace mltcp_emu {

namespace {

std::mutex g_bins_mu;
std::map<std::string, std::vector<uint64_t>> g_bins;	// job -> bytes per bin
uint64_t g_t0_us, g_bin_us = kDefaultBinUs;

bool write_bins(const std::string &path, const std::vector<uint64_t> &bins, uint64_t bin_us)
{
	FILE *f = fopen(path.c_str(), "w");
	if (!f) {
		fprintf(stderr, "mltcp-emu: cannot write %s: %s\n", path.c_str(), strerror(errno));
		return false;
	}
	fprintf(f, "bin_start_us,bytes\n");
	for (size_t i = 0; i < bins.size(); i++)
		fprintf(f, "%" PRIu64 ",%" PRIu64 "\n", (uint64_t)i * bin_us, bins[i]);
	return fclose(f) == 0;
}

}  // namespace

void rx_log_start(uint64_t t0_us, uint64_t bin_us)
{
	g_t0_us = t0_us;
	g_bin_us = bin_us ? bin_us : kDefaultBinUs;
}

void rx_log_account(const std::string &job, uint64_t n)
{
	uint64_t t = realtime_us();
	if (t < g_t0_us)
		return;
	size_t bin = (size_t)((t - g_t0_us) / g_bin_us);
	if (bin > 10000000)
		return;
	std::lock_guard<std::mutex> lk(g_bins_mu);
	auto &v = g_bins[job];
	if (v.size() <= bin)
		v.resize(bin + 1, 0);
	v[bin] += n;
}

bool rx_log_write(const std::string &path, const std::string &job)
{
	std::lock_guard<std::mutex> lk(g_bins_mu);
	return write_bins(path, g_bins[job], g_bin_us);
}

void rx_log_write_all(const std::string &dir)
{
	std::lock_guard<std::mutex> lk(g_bins_mu);
	for (const auto &[job, bins] : g_bins)
		write_bins(dir + "/rx-" + job + ".csv", bins, g_bin_us);
}

}  // namespace mltcp_emu
