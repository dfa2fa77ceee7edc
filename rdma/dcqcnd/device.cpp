// device.cpp - one device under control (see device.h).
//
// The gain follows core/mltcp_dcqcn.h: the firmware's R_AI and R_HAI become
// original x F(bytes_ratio), as the software reaction point scales its
// steps.  Differs from the software path: the firmware parameters are per
// PCI function (one port), not per QP, so all QPs of the device share one
// tracker (one training job per device), and F is applied in steps of
// gain_step with at most max_writes_per_sec firmware commands per second.
#include "device.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace dcqcnd {

void Log(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("mltcp-dcqcnd: ", stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	fflush(stdout);
	va_end(ap);
}

void LogError(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("mltcp-dcqcnd: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

bool RestoreSaved(const SavedState &s, std::string *err)
{
	bool ok = true;
	for (const SavedParam &p : s.params) {
		std::string e;
		int en;
		if (!WriteValue(p.path, p.value, &e, &en)) {
			*err += (err->empty() ? "" : "; ") + e;
			ok = false;
		}
	}
	return ok;
}

Device::Device(const DeviceConfig &c, const DeviceSpec &spec, const DevicePaths &paths,
	       const std::string &state_file)
	: c_(c), spec_(spec), paths_(paths), state_file_(state_file),
	  limiter_(c.max_writes_per_sec)
{
	path_[0] = paths.ai_path;
	path_[1] = paths.hai_path;
}

Device::~Device()
{
	if (hint_fd_ >= 0)
		close(hint_fd_);
}

std::string Device::Name() const
{
	std::string n = paths_.key;
	if (!paths_.netdev.empty() && paths_.netdev != paths_.key)
		n += "/" + paths_.netdev;
	return n + " [" + BackendName(paths_.backend) + "]";
}

const CcParam &Device::Param(int i) const
{
	return *FindRole(i == 0 ? Role::kAiRate : Role::kHaiRate);
}

StartError Device::Start(uint64_t now_us, std::string *err)
{
	Backend b = paths_.backend;
	SavedState old;
	std::string e;
	int r = LoadState(state_file_, &old, &e);
	if (r < 0) {
		*err = e;
		return StartError::kState;
	}
	if (r > 0) {
		if (OwnedByLiveDaemon(old)) {
			*err = "another mltcp-dcqcnd (pid " + std::to_string(old.pid) + ") owns " +
			       state_file_ + "; stop it first";
			return StartError::kState;
		}
		if (!RestoreSaved(old, &e)) {
			*err = "cannot put back the values a previous run (pid " +
			       std::to_string(old.pid) + ") left: " + e + "; they stay in " +
			       state_file_;
			return StartError::kFiles;
		}
		counters_.restores += old.params.size();
		unlink(state_file_.c_str());
		std::string what;
		for (const SavedParam &p : old.params)
			what += " " + p.path.substr(p.path.rfind('/') + 1) + "=" +
				std::to_string(p.value);
		Log("%s: restored%s left by a previous run (pid %d)", Name().c_str(),
		    what.c_str(), old.pid);
	}
	if (!paths_.also_present.empty())
		Log("%s: %s exists too; it is left alone (both set the same firmware "
		    "parameters; --backend chooses)", Name().c_str(), paths_.also_present.c_str());

	SavedState s;
	s.pid = getpid();
	s.device = paths_.key;
	s.backend = BackendName(b);
	for (int i = 0; i < kNumWritten; i++) {
		int en;
		if (!CheckParamFile(path_[i], &orig_[i], &e, &en)) {
			*err = "cannot modulate DCQCN: " + e;
			std::string why = ExplainErrno(c_.layout, b, en);
			if (!why.empty())
				*err += ": " + why;
			*err += "; nothing was changed";
			return StartError::kFiles;
		}
		counters_.param_writes++;	// the write-back probe is a command too
		if (!ParamInRange(Param(i), orig_[i], paths_.line_mbps)) {
			*err = path_[i] + " holds " + std::to_string(orig_[i]) + ", outside " +
			       RangeText(Param(i), paths_.line_mbps) +
			       " (not the parameter this daemon expects); nothing was changed";
			return StartError::kFiles;
		}
		cur_[i] = orig_[i];
		s.params.push_back({path_[i], orig_[i]});
	}
	uint64_t bytes = 0;
	if (spec_.hints.empty()) {
		int en;
		if (paths_.counter_path.empty() || !ReadValue(paths_.counter_path, &bytes, &e, &en)) {
			*err = "cannot read the port byte counter: " +
			       (paths_.counter_path.empty() ? "no RDMA device known" : e) +
			       " (name the RDMA device and port, or use hints)";
			return StartError::kFiles;
		}
		bytes *= c_.counter_unit;
	} else {
		// O_RDWR keeps the FIFO open when writers come and go.
		hint_fd_ = open(spec_.hints.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
		if (hint_fd_ < 0) {
			*err = "hints " + spec_.hints + ": " + strerror(errno);
			return StartError::kFiles;
		}
		ReadBytes(&bytes);
	}
	if (!SaveState(state_file_, s, &e)) {
		*err = "cannot save the original values: " + e + "; nothing was changed";
		return StartError::kState;
	}
	flow_ = mltcp::Flow(bytes, (uint32_t)now_us);
	flow_.Seed(c_.params, c_.seed);
	last_bytes_ = bytes;
	state_ = DeviceState::kActive;
	Log("modulating %s: %s=%" PRIu64 " %s=%" PRIu64 " (%s), progress from %s",
	    Name().c_str(), ParamName(Param(0), b), orig_[0], ParamName(Param(1), b), orig_[1],
	    paths_.param_dir.c_str(),
	    spec_.hints.empty() ? paths_.counter_path.c_str() : spec_.hints.c_str());
	return StartError::kNone;
}

bool Device::ReadBytes(uint64_t *bytes)
{
	if (!spec_.hints.empty() &&
	    (paths_.counter_path.empty() || access(paths_.counter_path.c_str(), R_OK) != 0)) {
		*bytes = hinted_bytes_;
		return true;
	}
	std::string err;
	int en;
	uint64_t v;
	if (!ReadValue(paths_.counter_path, &v, &err, &en)) {
		if (state_ == DeviceState::kActive)	// at start: count from 0
			Fail("counter read failed: " + err, en);
		return false;
	}
	*bytes = v * c_.counter_unit;
	return true;
}

// Lines "iter <bytes>": an iteration of <bytes> starts now;
// "sent <bytes>": progress when no port counter is available.
void Device::ReadHints(uint64_t bytes, uint32_t now)
{
	char tmp[512];
	ssize_t n;
	while ((n = read(hint_fd_, tmp, sizeof tmp)) > 0)
		hint_buf_.append(tmp, (size_t)n);
	size_t nl;
	while ((nl = hint_buf_.find('\n')) != std::string::npos) {
		std::string line = hint_buf_.substr(0, nl);
		hint_buf_.erase(0, nl + 1);
		unsigned long long v;
		if (sscanf(line.c_str(), "iter %llu", &v) == 1) {
			flow_.Hint(bytes, v, now);
			if (c_.verbose)
				Log("%s: hint: iteration of %llu bytes", Name().c_str(), v);
		} else if (sscanf(line.c_str(), "sent %llu", &v) == 1) {
			hinted_bytes_ += v;
		} else if (!line.empty()) {
			LogError("%s: ignoring hint line '%s' (expected 'iter <bytes>' or "
				 "'sent <bytes>')", Name().c_str(), line.c_str());
		}
	}
}

void Device::Poll(uint64_t now_us)
{
	if (state_ != DeviceState::kActive)
		return;
	uint64_t bytes;
	if (!ReadBytes(&bytes))
		return;
	uint32_t now = (uint32_t)now_us;
	if (hint_fd_ >= 0) {
		ReadHints(bytes, now);
		ReadBytes(&bytes);	// "sent" lines just read count now
	}
	if (bytes != last_bytes_) {
		if (!sending_)	// transmission resumes after a quiet poll
			flow_.OnTxStart(c_.params, bytes, now, c_.srtt_us);
		flow_.OnAck(bytes, now);
		sending_ = true;
	} else {
		sending_ = false;
	}
	last_bytes_ = bytes;
	Apply(now_us);
}

void Device::Apply(uint64_t now_us)
{
	uint32_t step = c_.gain_step;
	uint32_t q = (flow_.Gain(c_.params) + step / 2) / step * step;
	if (q == 0)
		q = step;
	if (q == applied_gain_) {
		deferred_gain_ = 0;
		return;
	}
	uint64_t v[kNumWritten];
	uint32_t changed = 0;
	for (int i = 0; i < kNumWritten; i++) {
		const CcParam &p = Param(i);
		v[i] = (orig_[i] * q + MLTCP_GAIN_ONE / 2) >> MLTCP_GAIN_SHIFT;
		if (v[i] < p.min)
			v[i] = p.min;
		if (v[i] > ParamMax(p, paths_.line_mbps))
			v[i] = ParamMax(p, paths_.line_mbps);
		changed += v[i] != cur_[i];
	}
	if (changed && !limiter_.Allows(now_us, changed)) {
		if (deferred_gain_ != q)
			counters_.gain_updates_deferred++;
		deferred_gain_ = q;
		return;
	}
	for (int i = 0; i < kNumWritten; i++) {
		if (v[i] == cur_[i])
			continue;
		std::string err;
		int en;
		if (!WriteValue(path_[i], v[i], &err, &en)) {
			counters_.param_write_failures++;
			cur_[i] = UINT64_MAX;	// unknown: restore it
			Fail("write failed: " + err, en);
			return;
		}
		counters_.param_writes++;
		limiter_.Record(now_us);
		cur_[i] = v[i];
	}
	applied_gain_ = q;
	deferred_gain_ = 0;
	counters_.gain_updates++;
	if (c_.verbose) {
		uint32_t r = flow_.Ratio();
		Log("%s: t=%" PRIu64 "ms writes=%u gain=%u/1024 ratio=%s %s=%" PRIu64 " %s=%" PRIu64,
		    Name().c_str(), now_us / 1000, changed, q,
		    r == mltcp::kRatioNone ? "none" : std::to_string(r).c_str(),
		    ParamName(Param(0), paths_.backend), v[0], ParamName(Param(1), paths_.backend),
		    v[1]);
	}
}

void Device::Fail(const std::string &what, int errnum)
{
	last_error_ = what;
	std::string why = ExplainErrno(c_.layout, paths_.backend, errnum);
	if (!why.empty())
		last_error_ += ": " + why;
	LogError("%s: %s; restoring its originals and stopping this device (other "
		 "devices carry on)", Name().c_str(), last_error_.c_str());
	state_ = DeviceState::kFailed;
	Stop("(after the failure)");
}

void Device::Stop(const char *why)
{
	if (hint_fd_ >= 0) {
		close(hint_fd_);
		hint_fd_ = -1;
	}
	if (state_ != DeviceState::kActive && state_ != DeviceState::kFailed)
		return;
	bool kept = false;
	std::string what;
	for (int i = 0; i < kNumWritten; i++) {
		if (cur_[i] == orig_[i])
			continue;
		std::string err;
		int en;
		if (WriteValue(path_[i], orig_[i], &err, &en)) {
			counters_.restores++;
			cur_[i] = orig_[i];
		} else {
			counters_.restore_failures++;
			kept = true;
			std::string expl = ExplainErrno(c_.layout, paths_.backend, en);
			LogError("%s: cannot restore %s=%" PRIu64 ": %s%s%s", Name().c_str(),
				 ParamName(Param(i), paths_.backend), orig_[i], err.c_str(),
				 expl.empty() ? "" : ": ", expl.c_str());
		}
		what += std::string(" ") + ParamName(Param(i), paths_.backend) + "=" +
			std::to_string(orig_[i]);
	}
	if (kept) {
		LogError("%s: the originals stay in %s; the next start or "
			 "`mltcp-dcqcnd --restore` puts them back once the device is back",
			 Name().c_str(), state_file_.c_str());
	} else {
		if (unlink(state_file_.c_str()) != 0 && errno != ENOENT)
			LogError("%s: %s: %s", Name().c_str(), state_file_.c_str(), strerror(errno));
		Log("%s: restored%s %s", Name().c_str(), what.empty() ? " (nothing changed)"
								       : what.c_str(), why);
	}
	if (state_ == DeviceState::kActive)
		state_ = DeviceState::kStopped;
}

}  // namespace dcqcnd
