// status.cpp - status file and status log line (see status.h).
#include "status.h"

#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstring>

namespace dcqcnd {

namespace {

const char *StateName(DeviceState s)
{
	switch (s) {
	case DeviceState::kIdle: return "idle";
	case DeviceState::kRefused: return "refused";
	case DeviceState::kActive: return "active";
	case DeviceState::kFailed: return "failed";
	case DeviceState::kStopped: return "stopped";
	}
	return "unknown";
}

// Device names, paths and errno text: escape what JSON requires.
std::string Json(const std::string &s)
{
	std::string o = "\"";
	for (char ch : s) {
		unsigned char c = (unsigned char)ch;
		if (c == '"' || c == '\\') {
			o += '\\';
			o += ch;
		} else if (c < 0x20) {
			char b[8];
			snprintf(b, sizeof b, "\\u%04x", c);
			o += b;
		} else {
			o += ch;
		}
	}
	return o + "\"";
}

}  // namespace

bool WriteStatus(const std::string &path, const std::vector<std::unique_ptr<Device>> &devs,
		 uint64_t uptime_us, uint32_t max_writes_per_sec, std::string *err)
{
	std::string tmp = path + ".tmp";
	FILE *f = fopen(tmp.c_str(), "w");
	if (!f) {
		*err = tmp + ": " + strerror(errno);
		return false;
	}
	fprintf(f, "{\n  \"pid\": %d,\n  \"time_unix\": %" PRId64 ",\n  \"uptime_seconds\": %.3f,\n"
		   "  \"max_writes_per_second\": %u,\n  \"devices\": [",
		(int)getpid(), (int64_t)time(nullptr), uptime_us / 1e6, max_writes_per_sec);
	for (size_t i = 0; i < devs.size(); i++) {
		const Device &d = *devs[i];
		const DevicePaths &p = d.paths();
		const DeviceCounters &c = d.counters();
		fprintf(f,
			"%s\n    {\"device\": %s, \"netdev\": %s, \"pci\": %s, \"port\": %u, "
			"\"backend\": %s, \"state\": %s,\n"
			"     \"gain_per_1024\": %u, \"ai_rate_mbps\": %" PRIu64
			", \"hai_rate_mbps\": %" PRIu64 ", \"iterations\": %u,\n"
			"     \"param_writes_total\": %" PRIu64 ", \"param_write_failures_total\": %" PRIu64
			", \"gain_updates_total\": %" PRIu64 ", \"gain_updates_deferred_total\": %" PRIu64
			", \"restores_total\": %" PRIu64 ", \"restore_failures_total\": %" PRIu64
			",\n     \"state_file\": %s, \"last_error\": %s}",
			i ? "," : "", Json(p.key).c_str(), Json(p.netdev).c_str(), Json(p.pci).c_str(),
			p.port, Json(BackendName(p.backend)).c_str(), Json(StateName(d.state())).c_str(),
			d.applied_gain(), d.ai_value(), d.hai_value(), d.iterations(), c.param_writes,
			c.param_write_failures, c.gain_updates, c.gain_updates_deferred, c.restores,
			c.restore_failures, Json(d.state_file()).c_str(), Json(d.last_error()).c_str());
	}
	fprintf(f, "\n  ]\n}\n");
	bool ok = fflush(f) == 0;
	ok = (fclose(f) == 0) && ok;
	if (!ok || rename(tmp.c_str(), path.c_str()) != 0) {
		*err = path + ": " + strerror(errno);
		unlink(tmp.c_str());
		return false;
	}
	return true;
}

void LogStatus(const std::vector<std::unique_ptr<Device>> &devs)
{
	for (const auto &dp : devs) {
		const Device &d = *dp;
		const DeviceCounters &c = d.counters();
		Log("status %s: %s, gain=%u/1024, %u iterations (%u hinted), %" PRIu64
		    " parameter writes, %" PRIu64 " failed, %" PRIu64 " gain updates, %" PRIu64
		    " deferred by the write limit, %" PRIu64 " restored, %" PRIu64 " not restored%s%s",
		    d.Name().c_str(), StateName(d.state()), d.applied_gain(), d.iterations(),
		    d.hinted(), c.param_writes, c.param_write_failures, c.gain_updates,
		    c.gain_updates_deferred, c.restores, c.restore_failures,
		    d.last_error().empty() ? "" : "; last error: ", d.last_error().c_str());
	}
}

}  // namespace dcqcnd
