// RankFileSequence: the files one session writes. Without rotation that is
// one file; with RotateIntervalS the drain thread closes the current file (its
// footer makes it complete and final) and continues in the next one, which
// starts with a full header, so every file is readable alone.
//
// Not thread-safe: the drain thread appends and rotates; Finish runs after it
// has been joined.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "session/drain_loop.h"
#include "smprof/status.h"
#include "smprof/trace.pb.h"
#include "trace/trace_writer.h"

namespace smprof::internal {

class RankFileSequence {
 public:
  // `first` already holds `header` (file_index 0). Later files are named by
  // RotatedPath. `rotate_interval_s` 0: never rotate.
  RankFileSequence(std::unique_ptr<TraceWriter> first, trace::FileHeader header, int compression_level,
                   std::uint32_t rotate_interval_s, std::int64_t start_ns);

  // Appends one chunk to the current file.
  Status Append(std::string_view tag, const google::protobuf::MessageLite& message);

  bool RotationDue(std::int64_t now_ns) const;

  // Continues in the next file, then closes the current one with a footer
  // (its share of `session_counts`, and next_file). Call between frames. If
  // the next file cannot be created, warns once and keeps writing the
  // current one; the next attempt is one interval later.
  void Rotate(const DrainResult& session_counts);

  // Closes the current (last) file with its footer. CUPTI's losses are only
  // known at stop: the last file's footer carries the session's.
  Status Finish(const DrainResult& session_counts, std::uint64_t open_ranges_at_stop,
                std::uint64_t cupti_records_dropped);

  // The GPU collector's report, known at stop: set before Finish, it goes in
  // the last file's footer.
  void SetGpuCollectionReport(const trace::GpuCollectionReport& report) { gpu_report_ = report; }
  // How the session ended: set before Finish, it goes in the last file's footer.
  void SetSessionEnd(const trace::SessionEnd& end) { end_ = end; }

  // For a forked child: forget the file without writing.
  void Abandon();

  const std::string& first_path() const { return first_path_; }
  std::uint64_t bytes_written() const;  // over every file

 private:
  Status CloseCurrent(const DrainResult& session_counts, std::uint64_t open_ranges, std::uint64_t cupti_records_dropped,
                      const std::string& next_file);

  std::unique_ptr<TraceWriter> current_;
  trace::FileHeader header_;  // the current file's
  int compression_level_;
  std::int64_t interval_ns_;
  std::int64_t next_rotation_ns_;
  std::string first_path_;
  DrainResult at_file_start_;       // session counts when the current file began
  std::uint64_t closed_bytes_ = 0;  // bytes of the files already closed
  std::optional<trace::GpuCollectionReport> gpu_report_;
  std::optional<trace::SessionEnd> end_;
};

}  // namespace smprof::internal
