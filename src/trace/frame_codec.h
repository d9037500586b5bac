// Records <-> the columnar Frame message: FrameBuilder and DecodeAnnotations
// for annotations (delta-encoded start times, frame-local string and thread
// tables), EncodeCounters and DecodeCounters for counter samples (one
// delta-encoded series per counter).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "smprof/annotate.h"
#include "smprof/status.h"
#include "smprof/trace.pb.h"
#include "trace/records.h"

namespace smprof::internal {

// A frame's string and thread tables, filled as rows refer to them: each name,
// text and thread goes into the frame once. Every table of a frame
// (annotations, GPU activity, API calls, ...) indexes the same two lists.
class FrameTables {
 public:
  // FrameBuilder takes no more annotations once the frame's strings hold this
  // many bytes: with names of at most 16 KiB (NameTable) and 65,536 rows per
  // table, no frame the writer makes passes 16 MiB decompressed, the size the
  // reader takes at any compression ratio (docs/TRACE_FORMAT.md "Limits").
  static constexpr std::size_t kStringBudgetBytes = 4 << 20;

  using NameLookup = std::function<std::string(smprof::NameId)>;
  using ThreadNameLookup = std::function<std::string(std::uint32_t tid)>;

  FrameTables(NameLookup names, ThreadNameLookup thread_names)
      : names_(std::move(names)), thread_names_(std::move(thread_names)) {}

  // Starts on `frame`, whose string and thread lists must be empty.
  void Reset(trace::Frame* frame);

  // Indexes into frame->strings / frame->threads, adding on first use.
  std::uint32_t Name(smprof::NameId id);
  std::uint32_t Text(std::string_view text);
  std::uint32_t Thread(std::uint32_t tid);

  // Bytes of the strings added since Reset.
  std::size_t string_bytes() const { return string_bytes_; }

 private:
  NameLookup names_;
  ThreadNameLookup thread_names_;
  trace::Frame* frame_ = nullptr;
  // By NameId (ids are small and dense): the name's index + 1, 0 if not yet
  // in this frame. An array, not a map: every row of every table looks up
  // its name here. `names_used_` lists the slots to clear for the next frame.
  std::vector<std::uint32_t> name_slots_;
  std::vector<smprof::NameId> names_used_;
  std::unordered_map<std::string, std::uint32_t> text_index_;
  std::unordered_map<std::uint32_t, std::uint32_t> thread_index_;
  std::size_t string_bytes_ = 0;
};

class FrameBuilder {
 public:
  using NameLookup = FrameTables::NameLookup;
  using ThreadNameLookup = FrameTables::ThreadNameLookup;

  FrameBuilder(NameLookup names, ThreadNameLookup thread_names) : tables_(std::move(names), std::move(thread_names)) {}

  void Add(const AnnotationRecord* records, std::size_t count) {
    pending_.insert(pending_.end(), records, records + count);
  }
  std::size_t size() const { return pending_.size() - head_; }

  // Moves the first `limit` pending records (in arrival order) into `frame`,
  // sorted by start time; fewer once the frame's strings reach
  // FrameTables::kStringBudgetBytes (the rest wait for the next frame).
  void Build(std::uint64_t sequence, trace::Frame* frame, std::size_t limit = SIZE_MAX);

  // The tables of the frame last built, for the other tables of that frame
  // (EncodeGpu); valid until the next Build.
  FrameTables& tables() { return tables_; }

 private:
  FrameTables tables_;
  std::vector<AnnotationRecord> pending_;
  std::size_t head_ = 0;  // pending_[0, head_) are already in frames
};

// One decoded annotation; `name` points into the frame it came from.
struct AnnotationRow {
  std::int64_t start_ns;
  std::int64_t dur_ns;
  std::string_view name;
  std::uint32_t tid;
  std::uint32_t depth;
  std::uint32_t name_index;  // `name`'s index in the frame's strings (per-frame caches)
};

// Decodes a frame's annotations; fails (naming the column) if the frame is
// inconsistent, e.g. columns of different lengths or an index out of range.
Status DecodeAnnotations(const trace::Frame& frame, std::vector<AnnotationRow>* rows);

using TrackLookup = std::function<CounterTrackInfo(std::uint32_t track)>;

// Adds `samples` to `frame` as one series per counter, each in time order.
void EncodeCounters(std::vector<CounterSample> samples, const TrackLookup& tracks, trace::Frame* frame);

// One decoded counter sample; `name` and `unit` point into the frame.
struct CounterRow {
  std::int64_t ts_ns;
  double value;
  std::string_view name;
  std::string_view unit;
};

// Decodes a frame's counter samples, series by series; fails (naming the
// problem) on inconsistent series.
Status DecodeCounters(const trace::Frame& frame, std::vector<CounterRow>* rows);

}  // namespace smprof::internal
