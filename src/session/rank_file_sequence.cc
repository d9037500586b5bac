#include "session/rank_file_sequence.h"

#include <utility>

#include "runtime/clock_anchor.h"
#include "runtime/warnings.h"
#include "session/clock_alignment_log.h"
#include "session/closed_file_queue.h"
#include "session/record_path.h"
#include "trace/file_format.h"

namespace smprof::internal {

namespace {

constexpr std::int64_t kNsPerSecond = 1000000000;

}  // namespace

RankFileSequence::RankFileSequence(std::unique_ptr<TraceWriter> first, trace::FileHeader header, int compression_level,
                                   std::uint32_t rotate_interval_s, std::int64_t start_ns)
    : current_(std::move(first)),
      header_(std::move(header)),
      compression_level_(compression_level),
      interval_ns_(static_cast<std::int64_t>(rotate_interval_s) * kNsPerSecond),
      next_rotation_ns_(start_ns + interval_ns_),
      first_path_(current_->path()) {}

Status RankFileSequence::Append(std::string_view tag, const google::protobuf::MessageLite& message) {
  return current_->Append(tag, message);
}

bool RankFileSequence::RotationDue(std::int64_t now_ns) const {
  return interval_ns_ > 0 && now_ns >= next_rotation_ns_;
}

void RankFileSequence::Rotate(const DrainResult& session_counts) {
  const ClockPair clock = ReadClockPair();
  next_rotation_ns_ = clock.monotonic_ns + interval_ns_;
  trace::FileHeader next_header = header_;
  next_header.set_file_index(header_.file_index() + 1);
  next_header.set_previous_file(current_->path());
  next_header.mutable_start()->set_monotonic_ns(clock.monotonic_ns);
  next_header.mutable_start()->set_realtime_ns(clock.realtime_ns);
  const std::string next_path = RotatedPath(first_path_, next_header.file_index());

  // The next file exists, header included, before the current one is closed:
  // if it cannot be created, nothing is lost and the current file goes on.
  std::string error;
  std::unique_ptr<TraceWriter> next;
  Status st = MakeParentDirectories(next_path, &error) ? TraceWriter::Create(next_path, compression_level_, &next)
                                                       : Status(StatusCode::kIoError, error);
  if (st.ok()) st = next->Append(trace_format::kHeaderTag, next_header);
  if (!st.ok()) {
    if (next) next->Discard();  // the next attempt creates it again
    WarnOnce("rotate", "RotateIntervalS: cannot start the next trace file (" + st.message() + "); '" +
                           current_->path() + "' goes on");
    return;
  }
  if (Status closed = CloseCurrent(session_counts, 0, 0, next_path); !closed.ok()) {
    WarnOnce("rotate-close", closed.message() + "; '" + current_->path() + "' may lack its footer");
  }
  closed_bytes_ += current_->bytes_written();
  current_ = std::move(next);
  header_ = std::move(next_header);
  at_file_start_ = session_counts;
}

Status RankFileSequence::Finish(const DrainResult& session_counts, std::uint64_t open_ranges_at_stop,
                                std::uint64_t cupti_records_dropped) {
  return CloseCurrent(session_counts, open_ranges_at_stop, cupti_records_dropped, "");
}

Status RankFileSequence::CloseCurrent(const DrainResult& session_counts, std::uint64_t open_ranges,
                                      std::uint64_t cupti_records_dropped, const std::string& next_file) {
  const DrainResult counts = CountsSince(session_counts, at_file_start_);
  const ClockPair clock = ReadClockPair();
  trace::Footer footer;
  footer.mutable_stop()->set_monotonic_ns(clock.monotonic_ns);
  footer.mutable_stop()->set_realtime_ns(clock.realtime_ns);
  footer.set_annotations_written(counts.written);
  footer.set_annotations_dropped(counts.dropped);
  footer.set_annotations_refused_open_limit(counts.refused_open_ranges);
  footer.set_annotation_names_cut(counts.names_cut);
  footer.set_annotation_names_refused(counts.names_refused);
  footer.set_frames_written(counts.frames);
  footer.set_open_ranges_at_stop(open_ranges);
  footer.set_counter_samples_written(counts.counter_samples);
  footer.set_gpu_records_written(counts.gpu_records);
  footer.set_gpu_records_dropped(counts.gpu_records_dropped);
  footer.set_cupti_records_dropped(cupti_records_dropped);
  footer.set_collectives_written(counts.collectives);
  footer.set_collectives_dropped(counts.collectives_dropped);
  footer.set_next_file(next_file);
  if (gpu_report_) *footer.mutable_gpu_collection() = *gpu_report_;
  if (end_ && next_file.empty()) *footer.mutable_end() = *end_;
  footer.set_frames_lost_to_write_errors(counts.frames_lost_to_write_errors);
  footer.set_annotations_lost_to_write_errors(counts.annotations_lost_to_write_errors);
  footer.set_last_write_error(counts.last_write_error);
  AddClockAlignmentsTo(&footer);
  Status status = current_->Append(trace_format::kFooterTag, footer);
  if (Status closed = current_->Close(); status.ok()) status = closed;
  if (status.ok()) ClosedFileQueue::Get().Push(current_->path());
  return status;
}

void RankFileSequence::Abandon() { current_->Abandon(); }

std::uint64_t RankFileSequence::bytes_written() const { return closed_bytes_ + current_->bytes_written(); }

}  // namespace smprof::internal
