// state_file.cpp - save and load a device's original values (state_file.h).
// Format, one item a line:
//   pid=<daemon pid>
//   device=<ibdev or netdev>
//   backend=<debugfs|sysfs>
//   param=<value> <absolute path>
#include "state_file.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace dcqcnd {

bool SaveState(const std::string &path, const SavedState &s, std::string *err)
{
	std::string tmp = path + ".tmp";
	FILE *f = fopen(tmp.c_str(), "w");
	if (!f) {
		*err = tmp + ": " + strerror(errno);
		return false;
	}
	fprintf(f, "pid=%d\ndevice=%s\nbackend=%s\n", s.pid, s.device.c_str(),
		s.backend.c_str());
	for (const SavedParam &p : s.params)
		fprintf(f, "param=%" PRIu64 " %s\n", p.value, p.path.c_str());
	bool ok = fflush(f) == 0 && fsync(fileno(f)) == 0;
	ok = (fclose(f) == 0) && ok;
	if (!ok || rename(tmp.c_str(), path.c_str()) != 0) {
		*err = path + ": " + strerror(errno);
		unlink(tmp.c_str());
		return false;
	}
	return true;
}

int LoadState(const std::string &path, SavedState *s, std::string *err)
{
	FILE *f = fopen(path.c_str(), "r");
	if (!f) {
		if (errno == ENOENT)
			return 0;
		*err = path + ": " + strerror(errno);
		return -1;
	}
	*s = SavedState();
	char line[4096];
	bool bad = false;
	while (fgets(line, sizeof line, f)) {
		size_t n = strlen(line);
		if (n && line[n - 1] == '\n')
			line[--n] = 0;
		unsigned long long v;
		int off = 0;
		if (!strncmp(line, "pid=", 4))
			s->pid = atoi(line + 4);
		else if (!strncmp(line, "device=", 7))
			s->device = line + 7;
		else if (!strncmp(line, "backend=", 8))
			s->backend = line + 8;
		else if (sscanf(line, "param=%llu %n", &v, &off) == 1 && off > 0 && line[off] == '/')
			s->params.push_back({line + off, (uint64_t)v});
		else if (n)
			bad = true;
	}
	fclose(f);
	if (bad || s->params.empty()) {
		*err = path + ": corrupt state file (expected pid=, device=, backend= and "
		       "param=<value> <path> lines); restore the values by hand and delete it";
		return -1;
	}
	return 1;
}

bool OwnedByLiveDaemon(const SavedState &s)
{
	if (s.pid <= 0 || s.pid == getpid() || kill(s.pid, 0) != 0)
		return false;
	// Alive (maybe in another PID namespace): only a daemon counts.
	char comm[64] = "";
	FILE *f = fopen(("/proc/" + std::to_string(s.pid) + "/comm").c_str(), "r");
	if (f) {
		if (!fgets(comm, sizeof comm, f))
			comm[0] = 0;
		fclose(f);
	}
	return !strncmp(comm, "mltcp-dcqcnd", 12);
}

}  // namespace dcqcnd
