// job.cpp - a job's iteration hints, outputs and profile loading (job.h).
#include "job.h"

#include <sys/resource.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "metrics.h"
#include "stats.h"
#include "wire.h"

#ifdef MLTCP_EMU_HAVE_LIBMLTCP
#include <mltcp/libmltcp.h>
#endif

namespace mltcp_emu {

void hint_iteration(int fd, uint64_t bytes)
{
#ifdef MLTCP_EMU_HAVE_LIBMLTCP
	if (mltcp_hint_iteration(fd, bytes) < 0)
		fatal(kExitHints, std::string("mltcp hint failed: ") + mltcp_last_error());
#else
	(void)fd;
	(void)bytes;
#endif
}

int64_t read_window_repairs(const std::vector<int> &fds)
{
#ifdef MLTCP_EMU_HAVE_LIBMLTCP
	int64_t sum = 0;
	for (int fd : fds) {
		uint64_t n = 0;
		if (mltcp_socket_window_repairs(fd, &n) < 0)
			return kCounterUnknown;
		sum += (int64_t)n;
	}
	return fds.empty() ? kCounterUnknown : sum;
#else
	(void)fds;
	return kCounterUnknown;
#endif
}

void write_outputs(const SendOptions &o, const Profile &p, const std::vector<IterRecord> &recs,
		   uint64_t t0, uint64_t bulk_bytes, const std::string &extra_json)
{
	if (!o.csv.empty()) {
		std::string err = write_iteration_csv(o.csv, o.job, recs, (int64_t)t0);
		if (!err.empty())
			fatal(kExitUsage, "--csv: " + err);
	}
	std::vector<double> it_us, comm_us;
	uint64_t total = bulk_bytes;
	for (const auto &r : recs) {
		it_us.push_back((double)(r.end_us - r.start_us));
		comm_us.push_back((double)(r.comm_end_us - r.comm_start_us));
		total += r.bytes;
	}
	IterStats s = iter_stats(it_us, o.warmup), c = iter_stats(comm_us, o.warmup);
	LossSummary losses = loss_summary(recs, o.warmup);
	rusage ru{};
	getrusage(RUSAGE_SELF, &ru);
	auto us_of = [](const timeval &t) { return (uint64_t)t.tv_sec * 1000000 + (uint64_t)t.tv_usec; };
	std::ostringstream js;
	js << "{\"job\":\"" << o.job << "\",\"profile\":\"" << p.name << "\",\"cc\":\""
	   << (o.cc.empty() ? read_small_file("/proc/sys/net/ipv4/tcp_congestion_control") : o.cc)
	   << "\",\"bulk\":" << (p.bulk ? "true" : "false") << ",\"iterations\":" << recs.size()
	   << ",\"warmup\":" << o.warmup << ",\"bytes_total\":" << total
	   << ",\"iter_mean_us\":" << (uint64_t)s.mean_us << ",\"iter_p50_us\":" << (uint64_t)s.p50_us
	   << ",\"iter_p99_us\":" << (uint64_t)s.p99_us << ",\"comm_mean_us\":" << (uint64_t)c.mean_us
	   << ",\"hints\":" << (o.hints ? "true" : "false");
	// After the warm-up, as the statistics; null: unknown (netstat.h).
	for (size_t k = 0; k < kLossCounterCount; k++) {
		js << ",\"" << kLossCounterNames[k] << "\":";
		if (losses.total[k] == kCounterUnknown)
			js << "null";
		else
			js << losses.total[k];
	}
	// The emulator's own CPU time: a benchmark checks it was not the bottleneck.
	js << ",\"cpu_user_us\":" << us_of(ru.ru_utime) << ",\"cpu_sys_us\":" << us_of(ru.ru_stime)
	   << extra_json << "}\n";
	if (!o.json.empty()) {
		std::ofstream f(o.json);
		f << js.str();
		if (!f)
			fatal(kExitUsage, "cannot write --json " + o.json);
	} else {
		fputs(js.str().c_str(), stdout);
	}
}

Profile load_job_profile(const SendOptions &o)
{
#ifndef MLTCP_EMU_HAVE_LIBMLTCP
	if (o.hints)
		fatal(kExitHints, "--hints: this mltcp-emu was built without libmltcp "
				  "(build tools/mltcpctl first, then re-run cmake; see tools/emu/CMakeLists.txt)");
#endif
	Profile p;
	try {
		p = find_profile(load_profiles(o.profile_file), o.profile, o.profile_file);
	} catch (const ProfileError &e) {
		fatal(kExitUsage, e.what());
	}
	if (o.job.size() >= kJobNameMax)
		fatal(kExitUsage, "--job name longer than 23 characters");
	if (!p.bulk && o.iterations == 0)
		fatal(kExitUsage, "--iterations must be at least 1");
	return p;
}

}  // namespace mltcp_emu
