#include "analysis/job/job_reader.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "trace/trace_reader.h"

namespace smprof::analysis {

namespace fs = std::filesystem;
using internal::TraceReader;

std::vector<std::string> ListTraceFiles(const std::string& path) {
  std::vector<std::string> out;
  std::error_code error;
  if (fs::is_regular_file(path, error)) return {path};
  if (!fs::is_directory(path, error)) return out;
  for (auto it = fs::recursive_directory_iterator(path, fs::directory_options::skip_permission_denied, error);
       it != fs::recursive_directory_iterator(); it.increment(error)) {
    if (error) break;
    // A damaged *.smprof file is listed too, so that reading it reports what is wrong.
    if (it->is_regular_file(error) &&
        (it->path().extension() == ".smprof" || internal::HasTraceMagic(it->path().string()))) {
      out.push_back(it->path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

// A file's entry from its header: its wall clock is the header's realtime anchor.
TraceFileEntry EntryOf(std::string path, std::uint64_t bytes, const trace::FileHeader& header) {
  TraceFileEntry entry;
  entry.path = std::move(path);
  entry.bytes = bytes;
  entry.header = header;
  entry.wall_offset_ns = header.start().realtime_ns() - header.start().monotonic_ns();
  return entry;
}

}  // namespace

JobReader::JobReader(const std::vector<std::string>& paths) {
  std::vector<TraceFileEntry> files;
  for (const std::string& root : paths) {
    for (const std::string& path : ListTraceFiles(root)) {
      std::unique_ptr<TraceReader> reader;
      const Status status = TraceReader::Open(path, &reader);
      if (!status.ok()) {
        warnings_.push_back(path + ": skipped: " + status.message());
        continue;
      }
      std::error_code error;
      files.push_back(EntryOf(path, fs::file_size(path, error), reader->header()));
    }
  }
  Group(std::move(files), ReadClockAlignments);
}

JobReader::JobReader(const std::vector<TraceFileEnds>& ends) {
  std::vector<TraceFileEntry> files;
  std::map<std::string, std::vector<trace::ClockAlignment>> rounds_of_file;
  for (const TraceFileEnds& file : ends) {
    std::unique_ptr<TraceReader> reader;
    const Status status = TraceReader::OpenBytes(file.name, file.start, &reader);
    if (!status.ok()) {
      warnings_.push_back(file.name + ": skipped: " + status.message());
      continue;
    }
    files.push_back(EntryOf(file.name, file.bytes, reader->header()));
    trace::Footer footer;
    if (internal::FooterFromTail(file.name, file.start, file.tail, &footer)) {
      rounds_of_file[file.name].assign(footer.clock_alignments().begin(), footer.clock_alignments().end());
    }
  }
  // ReadClockAlignments' choice: the rounds of the stream's last file with a footer.
  Group(std::move(files), [&rounds_of_file](const ProcessStream& stream) {
    for (auto file = stream.files.rbegin(); file != stream.files.rend(); ++file) {
      const auto rounds = rounds_of_file.find(file->path);
      if (rounds != rounds_of_file.end()) return rounds->second;
    }
    return std::vector<trace::ClockAlignment>();
  });
}

void JobReader::Group(std::vector<TraceFileEntry> files, const AlignmentsOf& alignments_of) {
  std::map<std::tuple<std::string, std::int64_t, std::uint32_t>, ProcessStream> by_process;
  for (TraceFileEntry& entry : files) {
    total_bytes_ += entry.bytes;
    const auto& h = entry.header;
    ProcessStream& stream = by_process[{h.host(), h.pid(), h.session_index()}];
    stream.host = h.host();
    stream.rank = h.rank();
    stream.pid = h.pid();
    stream.session_index = h.session_index();
    const auto role = h.config().find("ProcessRole");
    const bool worker = h.forked_child() || (role != h.config().end() && role->second == "worker");
    stream.worker_of_pid = worker ? h.parent_pid() : 0;
    stream.files.push_back(std::move(entry));
  }
  for (auto& [key, stream] : by_process) {
    std::sort(stream.files.begin(), stream.files.end(), [](const TraceFileEntry& a, const TraceFileEntry& b) {
      return a.header.file_index() < b.header.file_index();
    });
    streams_.push_back(std::move(stream));
  }
  // A worker started by a worker (forkserver's children) is a worker of the
  // rank process that started the first.
  std::map<std::pair<std::string, std::int64_t>, std::int64_t> worker_parents;
  for (const ProcessStream& s : streams_) {
    if (s.worker_of_pid != 0) worker_parents[{s.host, s.pid}] = s.worker_of_pid;
  }
  for (ProcessStream& s : streams_) {
    for (std::size_t hops = 0; s.worker_of_pid != 0 && hops < worker_parents.size(); ++hops) {
      const auto parent = worker_parents.find({s.host, s.worker_of_pid});
      if (parent == worker_parents.end()) break;
      s.worker_of_pid = parent->second;
    }
  }
  std::sort(streams_.begin(), streams_.end(),
            [](const ProcessStream& a, const ProcessStream& b) { return StreamKey(a) < StreamKey(b); });
  CorrectClocks(&streams_, alignments_of);
  bool first = true;
  for (const ProcessStream& stream : streams_) {
    for (const TraceFileEntry& file : stream.files) {
      const std::int64_t start = file.start_wall_ns();
      origin_ns_ = first ? start : std::min(origin_ns_, start);
      first = false;
    }
  }
}

std::string ReadProblemWarning(const FileReadResult& result) {
  return result.problem.empty() ? "" : result.file->path + ": " + result.problem;
}

void ReadStream(const ProcessStream& stream, FrameVisitor& visitor, std::vector<std::string>* warnings,
                const std::function<void(std::uint64_t done_bytes)>& progress) {
  std::uint64_t done_bytes = 0;
  trace::Frame frame;
  internal::FrameRows rows;  // its buffers are reused from frame to frame
  visitor.BeginStream(stream);
  for (const TraceFileEntry& file : stream.files) {
    FileReadResult result;
    result.file = &file;
    std::unique_ptr<TraceReader> reader;
    const Status status = TraceReader::Open(file.local_copy.empty() ? file.path : file.local_copy, &reader);
    if (!status.ok()) {
      result.problem = status.message();
    } else {
      const bool rows_wanted = visitor.ReadsRows();
      while (rows_wanted ? reader->NextFrame(&rows) : reader->NextFrame(&frame)) {
        ++result.frames;
        if (rows_wanted) {
          visitor.OnFrameRows(file, rows);
        } else {
          visitor.OnFrame(file, frame);
        }
        // A file still being written may have grown since it was listed.
        if (progress) progress(done_bytes + std::min(reader->bytes_read(), file.bytes));
      }
      result.has_footer = reader->has_footer();
      if (result.has_footer) result.footer = reader->footer();
      result.problem = reader->problem();
    }
    if (!result.problem.empty()) warnings->push_back(ReadProblemWarning(result));
    visitor.EndFile(result);
    done_bytes += file.bytes;
    if (progress) progress(done_bytes);
  }
  visitor.EndStream();
}

std::vector<trace::ClockAlignment> ReadClockAlignments(const ProcessStream& stream) {
  for (auto file = stream.files.rbegin(); file != stream.files.rend(); ++file) {
    std::unique_ptr<TraceReader> reader;
    if (!TraceReader::Open(file->path, &reader).ok() || !reader->ReadFooterOnly()) continue;
    const auto& rounds = reader->footer().clock_alignments();
    return {rounds.begin(), rounds.end()};
  }
  return {};
}

namespace {

// The aligned stream whose correction an unaligned one takes: its rank
// process's, else the most certain one of its host (one realtime clock).
const ProcessStream* AlignedNeighbour(const ProcessStream& s, const std::vector<ProcessStream>& streams) {
  const ProcessStream* best = nullptr;
  for (const ProcessStream& other : streams) {
    if (&other == &s || other.host != s.host || !other.clock.aligned) continue;
    if (s.worker_of_pid != 0 && other.pid == s.worker_of_pid) return &other;
    if (best == nullptr || other.clock.uncertainty_ns < best->clock.uncertainty_ns) best = &other;
  }
  return best;
}

}  // namespace

void CorrectClocks(std::vector<ProcessStream>* streams, const AlignmentsOf& alignments_of) {
  std::set<std::string> hosts;
  for (ProcessStream& s : *streams) {
    hosts.insert(s.host);
    s.clock = CorrectionFromRounds(alignments_of(s), s.rank, s.files.front().wall_offset_ns);
  }
  std::vector<ClockCorrection> taken(streams->size());
  for (std::size_t i = 0; i < streams->size(); ++i) {
    const ProcessStream& s = (*streams)[i];
    taken[i] = s.clock;
    if (s.clock.aligned) continue;
    // Unaligned with no problem: no round was recorded.
    const bool recorded = !s.clock.problem.empty();
    if (const ProcessStream* neighbour = AlignedNeighbour(s, *streams)) {
      taken[i] = neighbour->clock;
      taken[i].problem =
          recorded ? s.clock.problem + "; corrected as pid " + std::to_string(neighbour->pid) + " of its host" : "";
    } else if (!recorded && hosts.size() > 1) {  // one host has one realtime clock: nothing to correct
      taken[i].problem = "no clock alignment recorded: placed by its host's realtime clock";
    }
  }
  for (std::size_t i = 0; i < streams->size(); ++i) {
    ProcessStream& s = (*streams)[i];
    s.clock = taken[i];
    for (TraceFileEntry& f : s.files) f.wall_offset_ns += s.clock.correction_ns;
  }
}

void JobReader::Read(FrameVisitor& visitor, const ProgressCallback& progress) {
  std::uint64_t done_bytes = 0;
  for (const ProcessStream& stream : streams_) {
    std::function<void(std::uint64_t)> stream_progress;
    if (progress)
      stream_progress = [&](std::uint64_t stream_done) { progress(done_bytes + stream_done, total_bytes_); };
    ReadStream(stream, visitor, &warnings_, stream_progress);
    for (const TraceFileEntry& file : stream.files) done_bytes += file.bytes;
  }
}

}  // namespace smprof::analysis
