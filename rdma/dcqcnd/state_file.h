// state_file.h - the original parameter values of one device, kept on disk
// while the daemon may have changed them, so that they can be put back after
// a crash or kill -9 (next start, or --restore).  The file names every
// parameter by its full path, so a restore needs no device lookup and
// writes exactly what was changed, through the backend that changed it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dcqcnd {

struct SavedParam {
	std::string path;
	uint64_t value;
};

struct SavedState {
	int pid = 0;
	std::string device;	// the device key (ibdev or netdev)
	std::string backend;	// "debugfs" or "sysfs"
	std::vector<SavedParam> params;
};

// Written atomically (tmp + fsync + rename).
bool SaveState(const std::string &path, const SavedState &s, std::string *err);
// 1: loaded, 0: no file, -1: error (*err says which, and what to do).
int LoadState(const std::string &path, SavedState *s, std::string *err);
// Another live mltcp-dcqcnd owns the state file (pid in it, named so).
bool OwnedByLiveDaemon(const SavedState &s);

}  // namespace dcqcnd
