// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
//
// mltcp_options.hpp - the parameter tables of mltcp_param_table.h for C++17
// userspace: look a parameter up by name, parse and range-check a value,
// accept "name=value" and "--name=value" / "--name value" options, print
// help.  Every tool that takes MLTCP or DCQCN parameters (mltcpctl, the
// emulator, mltcp-dpdk, mltcp-rdma, the simulator) uses this, so names,
// ranges, units and error texts are the table's everywhere.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

extern "C" {
#include "mltcp_params.h"
#include "mltcp_dcqcn_params.h"
#include "mltcp_window.h"	// mltcp_params_derive
}

namespace mltcp {

// One row of a table.
struct ParamSpec {
  const char* name;  // the struct field's name
  const char* unit;
  const char* help;
  uint64_t def, min, max;
  size_t offset, size;  // of the field in its struct
  unsigned scope;       // MLTCP_PS_*: the flows it acts on
};

// The flows of every scope: a tool that takes every row.
inline constexpr unsigned kEveryScope = MLTCP_PS_RATE | MLTCP_PS_WINDOW | MLTCP_PS_JOB;

// "window flows (Reno, CUBIC)": what a scope (one MLTCP_PS_* bit or several)
// names in messages.
inline std::string ScopeText(unsigned scope) {
  std::string s;
  auto add = [&](unsigned bit, const char* text) {
    if (!(scope & bit)) return;
    s += std::string(s.empty() ? "" : " and ") + text;
  };
  add(MLTCP_PS_WINDOW, "window flows (Reno, CUBIC)");
  add(MLTCP_PS_RATE, "rate flows (DCQCN)");
  add(MLTCP_PS_JOB, "jobs of several connections (the BPF datapath's attached cgroups)");
  return s;
}

// Compile-time rows: mltcp::param_spec::slope.max, mltcp::dcqcn_spec::g_inv.def.
#define MLTCP_OPT_SPEC(S, type, field, unit, def, lo, hi, scope, help)  \
  inline constexpr ParamSpec field{#field, unit, help, (def), (lo), (hi), \
                                   offsetof(S, field), sizeof(type), (scope)};
namespace param_spec {
#define MLTCP_OPT_ROW(...) MLTCP_OPT_SPEC(mltcp_params, __VA_ARGS__)
MLTCP_PARAMS_TABLE(MLTCP_OPT_ROW)
#undef MLTCP_OPT_ROW
}  // namespace param_spec
namespace dcqcn_spec {
#define MLTCP_OPT_ROW(...) MLTCP_OPT_SPEC(mltcp_dcqcn_params, __VA_ARGS__)
MLTCP_DCQCN_PARAMS_TABLE(MLTCP_OPT_ROW)
#undef MLTCP_OPT_ROW
}  // namespace dcqcn_spec
#undef MLTCP_OPT_SPEC

// The table of one parameter struct, with its validation.
template <class Raw>
struct ParamTable;

template <>
struct ParamTable<mltcp_params> {
  static const std::vector<ParamSpec>& Rows() {
#define MLTCP_OPT_ROW(type, field, ...) param_spec::field,
    static const std::vector<ParamSpec> rows{MLTCP_PARAMS_TABLE(MLTCP_OPT_ROW)};
#undef MLTCP_OPT_ROW
    return rows;
  }
  // Range reason of row i (the C core's text) and the whole-set check.
  static const char* RangeReason(size_t i) {
    return mltcp_params_reason(static_cast<mltcp_param_error>(i + 1));
  }
  static const char* Check(const mltcp_params& p) {
    const auto e = mltcp_params_validate(&p);
    return e == MLTCP_PARAM_OK ? nullptr : mltcp_params_reason(e);
  }
  // The derived fields follow every change of a row.
  static void Derive(mltcp_params* p) { mltcp_params_derive(p); }
};

template <>
struct ParamTable<mltcp_dcqcn_params> {
  static const std::vector<ParamSpec>& Rows() {
#define MLTCP_OPT_ROW(type, field, ...) dcqcn_spec::field,
    static const std::vector<ParamSpec> rows{MLTCP_DCQCN_PARAMS_TABLE(MLTCP_OPT_ROW)};
#undef MLTCP_OPT_ROW
    return rows;
  }
  static const char* RangeReason(size_t i) {
    return mltcp_dcqcn_params_reason(static_cast<mltcp_dcqcn_param_error>(i + 1));
  }
  static const char* Check(const mltcp_dcqcn_params& p) {
    const auto e = mltcp_dcqcn_params_validate(&p);
    return e == MLTCP_DCQCN_PARAM_OK ? nullptr : mltcp_dcqcn_params_reason(e);
  }
  static void Derive(mltcp_dcqcn_params*) {}
};

// "idle-min-us" and "idle_min_us" name the same parameter.
inline std::string ParamKey(std::string s) {
  for (auto& c : s)
    if (c == '-') c = '_';
  return s;
}

template <class Raw>
const ParamSpec* FindParam(const std::string& name, size_t* index = nullptr) {
  const auto& rows = ParamTable<Raw>::Rows();
  const std::string key = ParamKey(name);
  for (size_t i = 0; i < rows.size(); i++)
    if (key == rows[i].name) {
      if (index) *index = i;
      return &rows[i];
    }
  return nullptr;
}

template <class Raw>
std::string ParamNames() {
  std::string s;
  for (const auto& r : ParamTable<Raw>::Rows()) s += std::string(s.empty() ? "" : ", ") + r.name;
  return s;
}

inline uint64_t GetParam(const void* raw, const ParamSpec& s) {
  if (s.size == sizeof(uint32_t)) {
    uint32_t v;
    std::memcpy(&v, static_cast<const char*>(raw) + s.offset, sizeof(v));
    return v;
  }
  uint64_t v;
  std::memcpy(&v, static_cast<const char*>(raw) + s.offset, sizeof(v));
  return v;
}

inline void PutParam(void* raw, const ParamSpec& s, uint64_t v) {
  if (s.size == sizeof(uint32_t)) {
    const uint32_t v32 = static_cast<uint32_t>(v);
    std::memcpy(static_cast<char*>(raw) + s.offset, &v32, sizeof(v32));
  } else {
    std::memcpy(static_cast<char*>(raw) + s.offset, &v, sizeof(v));
  }
}

template <class Raw>
uint64_t GetParam(const Raw& raw, const std::string& name) {
  const ParamSpec* s = FindParam<Raw>(name);
  if (!s) throw std::invalid_argument("unknown parameter '" + name + "'");
  return GetParam(&raw, *s);
}

// Set one parameter from text: a non-negative integer (decimal, or 0x hex)
// within its row's range; else std::invalid_argument with a message naming
// the parameter, its range and unit.  Rules between fields are checked by
// Validate() once all options are in.
template <class Raw>
void SetParam(Raw& raw, const std::string& name, const std::string& text) {
  size_t i = 0;
  const ParamSpec* s = FindParam<Raw>(name, &i);
  if (!s)
    throw std::invalid_argument("unknown parameter '" + name + "' (known: " + ParamNames<Raw>() +
                                ")");
  const char* reason = ParamTable<Raw>::RangeReason(i);
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 0);
  if (text.empty() || text[0] == '-' || text[0] == '+' || *end || errno == ERANGE)
    throw std::invalid_argument(std::string(reason) + ", got '" + text + "'");
  if (v < s->min || v > s->max)
    throw std::invalid_argument(std::string(reason) + ", got " + text);
  PutParam(&raw, *s, v);
  ParamTable<Raw>::Derive(&raw);
}

// "name=value".
template <class Raw>
void SetParamKv(Raw& raw, const std::string& kv) {
  const auto eq = kv.find('=');
  if (eq == std::string::npos || eq == 0)
    throw std::invalid_argument("parameter '" + kv + "' is not of the form name=value (names: " +
                                ParamNames<Raw>() + ")");
  SetParam(raw, kv.substr(0, eq), kv.substr(eq + 1));
}

// The whole set, including the rules between fields.
template <class Raw>
void Validate(const Raw& raw) {
  if (const char* why = ParamTable<Raw>::Check(raw)) throw std::invalid_argument(why);
}

// Option spelling of a row: "--dcqcn-g-inv".
inline std::string OptionName(const std::string& prefix, const ParamSpec& s) {
  std::string n = "--" + prefix + s.name;
  for (auto& c : n)
    if (c == '_') c = '-';
  return n;
}

// Command-line option "--<prefix><name>=value" or "--<prefix><name> value",
// with '-' or '_' in the name.  Returns false (and leaves i) if argv[i] is
// not one of this table's options; on a match consumes its value (advancing
// i past a separate one) and sets the field, throwing as SetParam does.
// scope: the flows the tool drives (MLTCP_PS_*); a row that acts on none of
// them is refused (std::invalid_argument naming what it acts on), not
// ignored.
template <class Raw>
bool ParseParamOption(Raw& raw, const std::string& prefix, int argc, char* const* argv, int& i,
                      unsigned scope = kEveryScope) {
  const std::string a = argv[i];
  const std::string dashes = "--" + prefix;
  if (a.compare(0, dashes.size(), dashes) != 0) return false;
  const auto eq = a.find('=');
  const std::string name = a.substr(dashes.size(), eq == std::string::npos ? std::string::npos
                                                                          : eq - dashes.size());
  const ParamSpec* row = FindParam<Raw>(name);
  if (!row) return false;
  if (!(row->scope & scope))
    throw std::invalid_argument(OptionName(prefix, *row) + " does not apply here: it acts on " +
                                ScopeText(row->scope) + ", and this tool drives " +
                                ScopeText(scope));
  std::string value;
  if (eq != std::string::npos) {
    value = a.substr(eq + 1);
  } else {
    if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
    value = argv[++i];
  }
  SetParam(raw, name, value);
  return true;
}

// Take this table's options out of argv[first..argc): the table's fields are
// set (throwing as SetParam does) and the other arguments are returned after
// argv[0..first), with a terminating nullptr, for getopt_long to parse
// (size() - 1 of them).
template <class Raw>
std::vector<char*> TakeParamOptions(Raw& raw, const std::string& prefix, int argc, char** argv,
                                    int first, unsigned scope = kEveryScope) {
  std::vector<char*> rest(argv, argv + first);
  for (int i = first; i < argc; i++)
    if (!ParseParamOption(raw, prefix, argc, argv, i, scope)) rest.push_back(argv[i]);
  rest.push_back(nullptr);
  return rest;
}

// One line per row: "<indent><name> <help> (<unit>, <min>..<max>, default <def>)",
// the names padded to the longest, so the help texts start in one column.
// as_option set: the option spelling (--prefix-name N); else the bare name.
// Only the rows that act on the flows of scope (MLTCP_PS_*).
template <class Raw>
std::string ParamHelp(const std::string& indent, bool as_option, const std::string& prefix = "",
                      unsigned scope = kEveryScope) {
  std::vector<ParamSpec> rows;
  for (const auto& r : ParamTable<Raw>::Rows())
    if (r.scope & scope) rows.push_back(r);
  auto shown = [&](const ParamSpec& r) {
    return as_option ? OptionName(prefix, r) + " N" : std::string(r.name);
  };
  size_t width = 0;
  for (const auto& r : rows) width = std::max(width, shown(r).size());
  std::string out;
  for (const auto& r : rows) {
    std::string n = shown(r);
    n.resize(width, ' ');
    out += indent + n + " " + r.help + " (" + r.unit + ", " + std::to_string(r.min) + ".." +
           std::to_string(r.max) + ", default " + std::to_string(r.def) + ")\n";
  }
  return out;
}

}  // namespace mltcp
