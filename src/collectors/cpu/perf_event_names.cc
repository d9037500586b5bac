// Perf event names through libpfm4: validation with suggestions, and encoding
// into perf_event_attr.
//
// libpfm4 answers only for the PMUs it detected on this machine:
// pfm_find_event and pfm_get_os_event_encoding say PFM_ERR_NOTFOUND both for a
// typo and for an event of a PMU this CPU does not have. It offers no call to
// tell them apart (LIBPFM_ENCODE_INACTIVE=1 would, but it is read from the
// environment at pfm_initialize, process-wide). Its tables of every supported
// PMU can be walked though: pfm_get_pmu_info works for every pfm_pmu_t (with
// is_present), and pfm_get_event_next/pfm_get_event_info/
// pfm_get_event_attr_info for their events. So a NOTFOUND name is looked up
// in an index of all event names, built once, lazily (~10-20 ms: ~18,000
// events of ~390 PMUs); indexing the unit masks too would take ~300 ms, so
// those are read only for the few events a name matches. Known names (the
// defaults, everything on this CPU) never build the index.
#include <perfmon/pfmlib.h>
#include <perfmon/pfmlib_perf_event.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "collectors/cpu/perf_counters.h"

namespace smprof::internal {

namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

bool HasUpper(const std::string& s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return std::isupper(static_cast<unsigned char>(c)) != 0; });
}

std::string Trim(const std::string& s) {
  const auto begin = s.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(" \t\r\n") - begin + 1);
}

// [pmu::]event[(:|.)attr[=value]]*, lowercased; attrs without their values.
struct NameParts {
  std::string pmu;
  std::string event;
  std::vector<std::string> attrs;
};

NameParts SplitName(const std::string& name) {
  NameParts parts;
  std::string rest = Lower(name);
  const auto colons = rest.find("::");
  if (colons != std::string::npos) {
    parts.pmu = rest.substr(0, colons);
    rest = rest.substr(colons + 2);
  }
  std::size_t start = 0;
  bool first = true;
  while (start <= rest.size()) {
    std::size_t end = rest.find_first_of(":.", start);
    if (end == std::string::npos) end = rest.size();
    std::string piece = rest.substr(start, end - start);
    if (first) {
      parts.event = piece;
      first = false;
    } else {
      parts.attrs.push_back(piece.substr(0, piece.find('=')));
    }
    start = end + 1;
  }
  return parts;
}

// Optimal string alignment distance (edits and adjacent swaps).
std::size_t EditDistance(const std::string& a, const std::string& b) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

struct Candidate {
  std::string name;  // lowercase
  bool preferred = false;
};

// Up to 3 names close to `input` (lowercase): by edit distance, a prefix or
// substring match counting as close; `preferred` ones (on this machine) first.
std::vector<std::string> Closest(const std::string& input, const std::vector<Candidate>& candidates, bool upper) {
  const std::size_t limit = std::max<std::size_t>(2, input.size() / 3);
  struct Scored {
    std::size_t distance;
    const Candidate* candidate;
  };
  std::vector<Scored> scored;
  for (const Candidate& c : candidates) {
    if (c.name == input) continue;
    const std::size_t gap = c.name.size() > input.size() ? c.name.size() - input.size() : input.size() - c.name.size();
    std::size_t distance = gap > limit ? limit + 1 : EditDistance(input, c.name);
    if (input.size() >= 3 && c.name.compare(0, input.size(), input) == 0) {
      distance = std::min<std::size_t>(distance, 1);
    } else if (input.size() >= 4 && c.name.find(input) != std::string::npos) {
      distance = std::min<std::size_t>(distance, 2);
    }
    if (distance <= limit) scored.push_back({distance, &c});
  }
  std::sort(scored.begin(), scored.end(), [](const Scored& a, const Scored& b) {
    if (a.distance != b.distance) return a.distance < b.distance;
    if (a.candidate->preferred != b.candidate->preferred) return a.candidate->preferred;
    if (a.candidate->name.size() != b.candidate->name.size())
      return a.candidate->name.size() < b.candidate->name.size();
    return a.candidate->name < b.candidate->name;
  });
  std::vector<std::string> out;
  for (const Scored& s : scored) {
    std::string shown = upper ? Upper(s.candidate->name) : s.candidate->name;
    if (std::find(out.begin(), out.end(), shown) == out.end()) out.push_back(shown);
    if (out.size() == 3) break;
  }
  return out;
}

std::string JoinNames(const std::vector<std::string>& names, const char* separator = ", ") {
  std::string out;
  for (const std::string& n : names) {
    if (!out.empty()) out += separator;
    out += n;
  }
  return out;
}

struct PmuEntry {
  std::string name;  // as libpfm4 spells it, e.g. "skl"
  bool present = false;
  bool uncore = false;
};

struct EventRef {
  int idx;
  std::size_t pmu;  // into NameIndex::pmus
};

// Every event name of every PMU libpfm4 supports.
struct NameIndex {
  std::vector<PmuEntry> pmus;
  std::unordered_map<std::string, std::vector<EventRef>> events;  // lowercase name -> events
  std::vector<Candidate> names;                                   // unique lowercase names
  double build_ms = 0;
};

struct LibraryState {
  std::mutex mu;  // libpfm4 is not documented as thread-safe: every call holds it
  std::once_flag init_once;
  int init_error = PFM_SUCCESS;
  std::unique_ptr<NameIndex> index;  // built on the first NOTFOUND
};

LibraryState& Library() {
  static auto* state = new LibraryState();  // leaked: usable from exit handlers
  return *state;
}

bool Initialized(std::string* error) {
  LibraryState& lib = Library();
  std::call_once(lib.init_once, [&lib] { lib.init_error = pfm_initialize(); });
  if (lib.init_error == PFM_SUCCESS) return true;
  if (error) *error = std::string("pfm_initialize: ") + pfm_strerror(lib.init_error);
  return false;
}

bool PmuInfo(int pmu, pfm_pmu_info_t* info) {
  std::memset(info, 0, sizeof(*info));
  info->size = sizeof(*info);
  return pfm_get_pmu_info(static_cast<pfm_pmu_t>(pmu), info) == PFM_SUCCESS;
}

bool EventInfo(int idx, pfm_os_t os, pfm_event_info_t* info) {
  std::memset(info, 0, sizeof(*info));
  info->size = sizeof(*info);
  return pfm_get_event_info(idx, os, info) == PFM_SUCCESS;
}

// The unit masks and modifiers of an event, lowercase, perf_event's included.
std::vector<std::string> AttrNames(int idx) {
  std::vector<std::string> names;
  pfm_event_info_t event;
  if (!EventInfo(idx, PFM_OS_PERF_EVENT_EXT, &event)) return names;
  for (int a = 0; a < event.nattrs; ++a) {
    pfm_event_attr_info_t attr;
    std::memset(&attr, 0, sizeof(attr));
    attr.size = sizeof(attr);
    if (pfm_get_event_attr_info(idx, a, PFM_OS_PERF_EVENT_EXT, &attr) == PFM_SUCCESS && attr.name) {
      names.push_back(Lower(attr.name));
    }
  }
  return names;
}

// Caller holds the lock.
const NameIndex& Index() {
  LibraryState& lib = Library();
  if (lib.index) return *lib.index;
  const auto start = std::chrono::steady_clock::now();
  auto index = std::make_unique<NameIndex>();
  std::unordered_map<std::string, std::size_t> seen;  // name -> position in names
  for (int p = PFM_PMU_NONE; p < PFM_PMU_MAX; ++p) {
    pfm_pmu_info_t info;
    if (!PmuInfo(p, &info) || !info.name) continue;
    const std::size_t pmu = index->pmus.size();
    index->pmus.push_back({info.name, info.is_present != 0, info.type == PFM_PMU_TYPE_UNCORE});
    for (int i = info.first_event; i != -1; i = pfm_get_event_next(i)) {
      pfm_event_info_t event;
      if (!EventInfo(i, PFM_OS_NONE, &event) || !event.name) continue;
      std::string name = Lower(event.name);
      index->events[name].push_back({i, pmu});
      auto it = seen.find(name);
      if (it == seen.end()) {
        seen.emplace(name, index->names.size());
        index->names.push_back({std::move(name), info.is_present != 0});
      } else if (info.is_present) {
        index->names[it->second].preferred = true;
      }
    }
  }
  index->build_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  lib.index = std::move(index);
  return *lib.index;
}

// What a name is, with what to tell the user.
struct Lookup {
  PerfEncodeResult result = PerfEncodeResult::kUnknown;
  std::string detail;                    // see PerfEncodeResult
  std::string what;                      // for kUnknown/kInvalid: "perf event", "PMU", an attribute
  std::vector<std::string> suggestions;  // close known names
  std::vector<std::string> valid;        // when no name is close: some valid ones
};

// Up to 12 of `names`, in the user's case, for "valid: ...".
std::vector<std::string> SomeOf(const std::vector<Candidate>& names, bool upper) {
  std::vector<std::string> out;
  for (const Candidate& c : names) {
    std::string shown = upper ? Upper(c.name) : c.name;
    if (std::find(out.begin(), out.end(), shown) == out.end()) out.push_back(std::move(shown));
    if (out.size() == 12) break;
  }
  return out;
}

std::string PmuList(const std::vector<std::string>& pmus) {
  std::string out = pmus.size() == 1 ? "event of PMU " : "event of PMUs ";
  for (std::size_t i = 0; i < pmus.size() && i < 3; ++i) out += (i ? ", '" : "'") + pmus[i] + "'";
  if (pmus.size() > 3) out += " and " + std::to_string(pmus.size() - 3) + " more";
  return out;
}

// The words of a name ("cpu_clk_unhalted.ref_tsc" -> cpu clk unhalted ref tsc), 2 letters or more.
std::vector<std::string> Words(const std::string& s) {
  std::vector<std::string> words;
  std::string word;
  for (char c : s + "_") {
    if (c == '_' || c == '.' || c == ':' || c == '-') {
      if (word.size() >= 2 && std::find(words.begin(), words.end(), word) == words.end()) words.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  return words;
}

// For names edit distance cannot fix, like "clk_unhalted_ref.tsc": events and
// event.umask pairs sharing the most words with `parts`, at least 2.
std::vector<std::string> SharedWordSuggestions(const NameParts& parts, const NameIndex& index,
                                               const std::vector<std::size_t>& pmu_filter, bool upper, char separator) {
  std::string whole = parts.event;
  for (const std::string& a : parts.attrs) whole += "." + a;
  const std::vector<std::string> wanted = Words(whole);
  auto shared = [&wanted](const std::vector<std::string>& words) {
    return static_cast<std::size_t>(std::count_if(words.begin(), words.end(), [&wanted](const std::string& w) {
      return std::find(wanted.begin(), wanted.end(), w) != wanted.end();
    }));
  };
  struct Scored {
    std::size_t shared, extra;
    std::string name;
  };
  std::vector<Scored> scored;
  for (const auto& [event_name, refs] : index.events) {
    const std::vector<std::string> event_words = Words(event_name);
    if (shared(event_words) < 2) continue;
    std::unordered_set<std::string> attrs_seen;
    std::size_t looked = 0;
    for (const EventRef& ref : refs) {
      if (!pmu_filter.empty() && std::find(pmu_filter.begin(), pmu_filter.end(), ref.pmu) == pmu_filter.end()) continue;
      if (looked++ == 0) scored.push_back({shared(event_words), 0, event_name});
      if (looked > 64) break;  // bounds the work; the same event on many PMUs has much the same unit masks
      for (const std::string& attr : AttrNames(ref.idx)) {
        if (!attrs_seen.insert(attr).second) continue;
        std::vector<std::string> words = event_words;
        for (const std::string& w : Words(attr)) words.push_back(w);
        scored.push_back({shared(words), 0, event_name + separator + attr});
      }
    }
  }
  for (Scored& s : scored) s.extra = Words(s.name).size() - s.shared;
  std::sort(scored.begin(), scored.end(), [](const Scored& a, const Scored& b) {
    if (a.shared != b.shared) return a.shared > b.shared;
    if (a.extra != b.extra) return a.extra < b.extra;
    return a.name < b.name;
  });
  std::vector<std::string> out;
  for (const Scored& s : scored) {
    out.push_back(upper ? Upper(s.name) : s.name);
    if (out.size() == 3) break;
  }
  return out;
}

// A NOTFOUND name: unknown, or known only on PMUs that are not here.
void LookUpAbsent(const std::string& name, Lookup* out) {
  const NameIndex& index = Index();
  const NameParts parts = SplitName(name);
  const bool upper = HasUpper(name);
  std::vector<std::size_t> pmu_filter;  // positions of PMUs named by the prefix
  if (!parts.pmu.empty()) {
    std::vector<Candidate> pmu_names;
    for (std::size_t p = 0; p < index.pmus.size(); ++p) {
      if (Lower(index.pmus[p].name) == parts.pmu) pmu_filter.push_back(p);
      pmu_names.push_back({Lower(index.pmus[p].name), index.pmus[p].present});
    }
    if (pmu_filter.empty()) {
      out->result = PerfEncodeResult::kUnknown;
      out->what = "PMU '" + name.substr(0, name.find("::")) + "' in perf event";
      out->suggestions = Closest(parts.pmu, pmu_names, false);
      return;
    }
  }
  std::vector<EventRef> events;
  if (auto it = index.events.find(parts.event); it != index.events.end()) {
    for (const EventRef& ref : it->second) {
      if (pmu_filter.empty() || std::find(pmu_filter.begin(), pmu_filter.end(), ref.pmu) != pmu_filter.end()) {
        events.push_back(ref);
      }
    }
  }
  if (events.empty()) {
    out->result = PerfEncodeResult::kUnknown;
    out->what = "perf event";
    if (pmu_filter.empty()) {
      out->suggestions = Closest(parts.event, index.names, upper);
    } else {
      std::vector<Candidate> in_pmu;
      for (const auto& [event_name, refs] : index.events) {
        for (const EventRef& ref : refs) {
          if (ref.pmu == pmu_filter.front()) in_pmu.push_back({event_name, false});
        }
      }
      out->suggestions = Closest(parts.event, in_pmu, upper);
    }
    if (out->suggestions.empty()) {
      const char separator = name.find('.') != std::string::npos ? '.' : ':';
      out->suggestions = SharedWordSuggestions(parts, index, pmu_filter, upper, separator);
    }
    return;
  }
  // The event is known; it matches on a PMU when every attribute is one of its own.
  std::vector<std::string> matched_pmus;
  std::string bad_attr;
  std::vector<Candidate> attr_names;
  for (const EventRef& ref : events) {
    const std::vector<std::string> valid = AttrNames(ref.idx);
    const auto missing = std::find_if(parts.attrs.begin(), parts.attrs.end(), [&valid](const std::string& a) {
      return std::find(valid.begin(), valid.end(), a) == valid.end();
    });
    if (missing == parts.attrs.end()) {
      const std::string& pmu = index.pmus[ref.pmu].name;
      if (std::find(matched_pmus.begin(), matched_pmus.end(), pmu) == matched_pmus.end()) matched_pmus.push_back(pmu);
    } else {
      if (bad_attr.empty()) bad_attr = *missing;
      for (const std::string& v : valid) attr_names.push_back({v, false});
    }
  }
  if (matched_pmus.empty()) {
    out->result = PerfEncodeResult::kInvalid;
    out->what = "unit mask or modifier '" + bad_attr + "' of perf event";
    out->suggestions = Closest(bad_attr, attr_names, upper);
    out->valid = SomeOf(attr_names, upper);
    out->detail = "unknown unit mask or modifier '" + bad_attr + "'";
    return;
  }
  out->result = PerfEncodeResult::kPmuNotPresent;
  out->detail = PmuList(matched_pmus);
}

// A name libpfm4 found on a present PMU but would not encode: which attribute is wrong.
void LookUpBadAttribute(const std::string& name, int error, Lookup* out) {
  out->result = PerfEncodeResult::kInvalid;
  out->detail = pfm_strerror(error);
  const NameParts parts = SplitName(name);
  const std::string base = parts.pmu.empty() ? parts.event : parts.pmu + "::" + parts.event;
  const int idx = pfm_find_event(base.c_str());
  if (idx < 0) return;
  const std::vector<std::string> valid = AttrNames(idx);
  for (const std::string& attr : parts.attrs) {
    if (std::find(valid.begin(), valid.end(), attr) != valid.end()) continue;
    std::vector<Candidate> candidates;
    for (const std::string& v : valid) candidates.push_back({v, false});
    out->what = "unit mask or modifier '" + attr + "' of perf event";
    out->detail = "unknown unit mask or modifier '" + attr + "'";
    out->suggestions = Closest(attr, candidates, HasUpper(name));
    out->valid = SomeOf(candidates, HasUpper(name));
    return;
  }
}

// The PMU of a name libpfm4 finds on this machine.
bool PmuOfEvent(int idx, pfm_pmu_info_t* pmu) {
  pfm_event_info_t event;
  return idx >= 0 && EventInfo(idx, PFM_OS_NONE, &event) && PmuInfo(event.pmu, pmu) && pmu->name;
}

void Resolve(const std::string& name, bool with_kernel, perf_event_attr* attr, Lookup* out) {
  std::memset(attr, 0, sizeof(*attr));
  if (!Initialized(&out->detail)) {
    out->result = PerfEncodeResult::kLibraryFailed;
    return;
  }
  std::lock_guard<std::mutex> lock(Library().mu);
  pfm_perf_encode_arg_t arg;
  std::memset(&arg, 0, sizeof(arg));
  arg.size = sizeof(arg);
  arg.attr = attr;
  const int plm = with_kernel ? (PFM_PLM0 | PFM_PLM3) : PFM_PLM3;
  const int error = pfm_get_os_event_encoding(name.c_str(), plm, PFM_OS_PERF_EVENT_EXT, &arg);
  pfm_pmu_info_t pmu;
  if (error == PFM_SUCCESS || error == PFM_ERR_NOTSUPP) {
    // NOTSUPP: the PMU is detected (by CPUID) but the kernel has no perf driver for it.
    const int idx = error == PFM_SUCCESS ? arg.idx : pfm_find_event(name.c_str());
    const bool known_pmu = PmuOfEvent(idx, &pmu);
    if (known_pmu && pmu.type == PFM_PMU_TYPE_UNCORE) {
      out->result = PerfEncodeResult::kUncore;
      out->detail = pmu.name;
    } else if (error == PFM_SUCCESS) {
      out->result = PerfEncodeResult::kOk;
    } else {
      out->result = PerfEncodeResult::kNoKernelDriver;
      out->detail = known_pmu ? pmu.name : "?";
    }
  } else if (error == PFM_ERR_NOTFOUND) {
    LookUpAbsent(name, out);
  } else {
    LookUpBadAttribute(name, error, out);
  }
  if (out->result != PerfEncodeResult::kOk) std::memset(attr, 0, sizeof(*attr));
}

}  // namespace

PerfEncodeResult EncodePerfEvent(const std::string& name, bool with_kernel, perf_event_attr* attr,
                                 std::string* detail) {
  Lookup lookup;
  try {
    Resolve(name, with_kernel, attr, &lookup);
  } catch (...) {  // allocation failure: nothing to count
    lookup.result = PerfEncodeResult::kLibraryFailed;
    lookup.detail = "out of memory";
  }
  if (detail) *detail = lookup.detail;
  return lookup.result;
}

Status ParsePerfEventList(const std::string& list, std::vector<std::string>* names) {
  try {
    names->clear();
    std::unordered_set<std::string> seen;
    std::size_t start = 0;
    while (start <= list.size()) {
      std::size_t end = list.find(',', start);
      if (end == std::string::npos) end = list.size();
      std::string name = Trim(list.substr(start, end - start));
      start = end + 1;
      if (name.empty() || !seen.insert(Lower(name)).second) continue;
      perf_event_attr attr;
      Lookup lookup;
      Resolve(name, true, &attr, &lookup);
      if (lookup.result == PerfEncodeResult::kUnknown || lookup.result == PerfEncodeResult::kInvalid) {
        std::string message = lookup.what.empty() ? "invalid perf event '" + name + "' in PerfEvents: " + lookup.detail
                                                  : "unknown " + lookup.what + " '" + name + "' in PerfEvents";
        if (!lookup.suggestions.empty()) {
          message += "; did you mean: " + JoinNames(lookup.suggestions);
        } else if (!lookup.valid.empty()) {
          message += "; valid: " + JoinNames(lookup.valid);
        } else if (lookup.result == PerfEncodeResult::kUnknown) {
          message +=
              "; use a perf name (cycles, instructions, cache-misses, branch-misses, task-clock, ...) or a libpfm4 "
              "event, [pmu::]EVENT[:UMASK] (libpfm4's showevtinfo lists them)";
        }
        names->clear();
        return Status(StatusCode::kInvalidArgument, message);
      }
      names->push_back(std::move(name));
    }
    return Status::Ok();
  } catch (...) {
    names->clear();
    return Status(StatusCode::kInternal, "out of memory while checking PerfEvents");
  }
}

}  // namespace smprof::internal
