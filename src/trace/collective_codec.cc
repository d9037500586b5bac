#include "trace/collective_codec.h"

#include <algorithm>
#include <string>

namespace smprof::internal {

namespace {

// Whether the record has its Work.wait() (0: none; a wait starts after its call).
bool Waited(const CollectiveRecord& r) { return r.wait_start_ns != 0 && r.wait_start_ns > r.start_ns; }

}  // namespace

void EncodeCollectives(std::vector<CollectiveRecord> records, FrameTables* tables, trace::Frame* frame) {
  if (records.empty()) return;
  std::stable_sort(records.begin(), records.end(),
                   [](const CollectiveRecord& a, const CollectiveRecord& b) { return a.start_ns < b.start_ns; });
  trace::Collectives* c = frame->mutable_collectives();
  const bool waits = std::any_of(records.begin(), records.end(), Waited);
  std::int64_t previous = records.front().start_ns;
  c->set_base_ns(previous);
  for (const CollectiveRecord& r : records) {
    c->add_start_delta_ns(r.start_ns - previous);
    previous = r.start_ns;
    c->add_call_dur_ns(static_cast<std::uint64_t>(std::max<std::int64_t>(r.call_dur_ns, 0)));
    c->add_op_index(tables->Text(r.op));
    c->add_group_index(tables->Text(r.group));
    c->add_group_size(r.group_size);
    c->add_group_rank(r.group_rank);
    c->add_sequence(r.sequence);
    c->add_bytes(r.bytes);
    c->add_dtype_index(tables->Text(r.dtype));
    c->add_async_op(r.async_op);
    c->add_thread_index(tables->Thread(r.tid));
    if (waits) {
      const bool waited = Waited(r);
      c->add_wait_offset_ns(waited ? static_cast<std::uint64_t>(r.wait_start_ns - r.start_ns) : 0);
      c->add_wait_dur_ns(waited ? static_cast<std::uint64_t>(std::max<std::int64_t>(r.wait_dur_ns, 0)) : 0);
    }
  }
}

namespace {

// `string(i)` and `tid(i)` read the frame's tables, `strings` and `threads` their sizes.
template <typename StringAt, typename TidAt>
Status Decode(const trace::Collectives& c, std::uint64_t sequence, std::size_t strings, std::size_t threads,
              const StringAt& string, const TidAt& tid, std::vector<CollectiveRow>* rows) {
  const int n = c.start_delta_ns_size();
  const auto bad = [sequence](const std::string& what) {
    return Status(StatusCode::kInternal,
                  "frame " + std::to_string(sequence) + ": malformed collectives (" + what + ")");
  };
  for (const int size :
       {c.call_dur_ns_size(), c.op_index_size(), c.group_index_size(), c.group_size_size(), c.group_rank_size(),
        c.sequence_size(), c.bytes_size(), c.dtype_index_size(), c.async_op_size(), c.thread_index_size()}) {
    if (size != n) return bad("columns of different lengths");
  }
  const bool waits = c.wait_offset_ns_size() != 0 || c.wait_dur_ns_size() != 0;
  if (waits && (c.wait_offset_ns_size() != n || c.wait_dur_ns_size() != n)) return bad("columns of different lengths");
  rows->reserve(rows->size() + static_cast<std::size_t>(n));
  std::int64_t start = c.base_ns();
  for (int i = 0; i < n; ++i) {
    start += c.start_delta_ns(i);
    if (c.op_index(i) >= strings || c.group_index(i) >= strings || c.dtype_index(i) >= strings) {
      return bad("string index out of range");
    }
    if (c.thread_index(i) >= threads) return bad("thread_index out of range");
    CollectiveRow& row = rows->emplace_back();
    row.start_ns = start;
    row.call_dur_ns = static_cast<std::int64_t>(c.call_dur_ns(i));
    row.op = string(c.op_index(i));
    row.group = string(c.group_index(i));
    row.group_size = c.group_size(i);
    row.group_rank = c.group_rank(i);
    row.sequence = c.sequence(i);
    row.bytes = c.bytes(i);
    row.dtype = string(c.dtype_index(i));
    row.async_op = c.async_op(i);
    row.tid = tid(c.thread_index(i));
    if (waits) {
      row.wait_offset_ns = static_cast<std::int64_t>(c.wait_offset_ns(i));
      row.wait_dur_ns = static_cast<std::int64_t>(c.wait_dur_ns(i));
    }
  }
  return Status::Ok();
}

}  // namespace

Status DecodeCollectives(const trace::Frame& frame, std::vector<CollectiveRow>* rows) {
  return Decode(
      frame.collectives(), frame.sequence(), static_cast<std::size_t>(frame.strings_size()),
      static_cast<std::size_t>(frame.threads_size()),
      [&frame](std::uint32_t i) { return std::string_view(frame.strings(static_cast<int>(i))); },
      [&frame](std::uint32_t i) { return frame.threads(static_cast<int>(i)).tid(); }, rows);
}

Status DecodeCollectives(const FrameRows& frame, std::vector<CollectiveRow>* rows) {
  return Decode(
      frame.tables().collectives(), frame.sequence, frame.strings.size(), frame.threads.size(),
      [&frame](std::uint32_t i) { return frame.strings[i]; },
      [&frame](std::uint32_t i) { return frame.threads[i].tid; }, rows);
}

}  // namespace smprof::internal
