#include "analysis/timeline/timeline_export.h"

#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string_view>
#include <utility>

#include "analysis/job/job_reader.h"
#include "analysis/timeline/collective_chains.h"
#include "analysis/timeline/machine_counter_log.h"
#include "analysis/timeline/step_window.h"

namespace smprof::analysis {

namespace {

// The prologue's and epilogue's Perfetto packet sequence; a rank process's
// is its process id, which is above every host's and so never 1.
constexpr std::uint32_t kJobSequence = 1;

std::unique_ptr<TimelineWriter> NewWriter(TimelineFormat format, ExportOutput* out) {
  return format == TimelineFormat::kChrome ? NewChromeWriter(out) : NewPerfettoWriter(out);
}

Status CheckOptions(const TimelineOptions& options) {
  if (options.gpu_utilization_max_buckets <= 0) {
    return Status(StatusCode::kInvalidArgument, "gpu_utilization_max_buckets must be positive");
  }
  return Status::Ok();
}

void WritePrologue(const TimelinePlan& plan, TimelineWriter* writer, ExportOutput* out, TimelineStats* stats) {
  writer->OnStart(plan.job);
  for (const TimelineProcess& host : plan.hosts) writer->OnProcess(host);
  out->EndSegment();
  stats->job_start_wall_ns = plan.job.start_wall_ns;
  stats->processes = static_cast<std::uint32_t>(plan.hosts.size() + plan.groups.size());
}

void WriteGroups(const TimelinePlan& plan, std::size_t first_group, std::size_t end_group,
                 const TimelineOptions& options, TimelineWriter* writer, ExportOutput* out, MachineCounterLog* machine,
                 TimelineStats* stats) {
  for (std::size_t g = first_group; g < end_group; ++g) {
    writer->BeginSegment(plan.job, plan.groups[g].process.id);
    WalkTimelineGroup(plan, g, options, writer, machine, stats);
    out->EndSegment();
  }
}

// The machine counters of `logs` (in export order), each (host, counter)
// from the first series of it, then the file's end.
Status WriteEpilogue(const TimelinePlan& plan, const std::vector<std::string>& logs, TimelineWriter* writer,
                     TimelineStats* stats) {
  writer->BeginSegment(plan.job, kJobSequence);
  std::set<std::pair<std::uint32_t, std::string>, std::less<>> shown;  // (host process, counter name)
  std::map<std::uint32_t, std::uint32_t> tracks_per_host;
  std::deque<TimelineTrack> tracks;
  std::vector<std::vector<const TimelineTrack*>> track_of(logs.size());  // per log and series; null: not shown
  std::vector<MachineCounterSeries> series;
  for (std::size_t i = 0; i < logs.size(); ++i) {
    if (Status s = ReadMachineCounterLog(logs[i], &series, nullptr); !s.ok()) return s;
    for (MachineCounterSeries& s : series) {
      const TimelineTrack* track = nullptr;
      if (shown.emplace(s.host_process, s.name).second) {
        TimelineTrack& t = tracks.emplace_back();
        t.uuid = (std::uint64_t{s.host_process} << 32) | ++tracks_per_host[s.host_process];
        t.process = s.host_process;
        t.kind = TrackKind::kCounter;
        t.name = std::move(s.name);
        t.unit = std::move(s.unit);
        writer->OnTrack(t);
        track = &t;
      }
      track_of[i].push_back(track);
    }
  }
  for (std::size_t i = 0; i < logs.size(); ++i) {
    const std::vector<const TimelineTrack*>& shown_as = track_of[i];
    const Status s =
        ReadMachineCounterLog(logs[i], &series, [&](std::uint32_t index, std::int64_t wall_ns, double value) {
          if (shown_as[index] == nullptr) return;
          writer->OnCounter(*shown_as[index], wall_ns, value);
          ++stats->counter_samples;
        });
    if (!s.ok()) return s;
  }
  writer->Finish();
  return Status::Ok();
}

// Closes `out` (and returns `status` if it failed); removes the file unless all went well.
Status Finish(Status status, const std::string& path, ExportOutput* out, std::uint64_t* file_bytes) {
  const Status closed = out->Close();
  if (status.ok()) status = closed;
  if (status.ok() && file_bytes != nullptr) *file_bytes = out->file_bytes();
  if (!status.ok()) std::remove(path.c_str());
  return status;
}

}  // namespace

std::string MachineCounterLogPath(const std::string& part_path) { return part_path + ".machine"; }

Status ExportTimeline(TimelineFormat format, const TimelineOptions& options, const std::string& path, bool gzip,
                      TimelineStats* stats, std::uint64_t* file_bytes) {
  if (Status s = CheckOptions(options); !s.ok()) return s;
  const JobReader job(options.files);
  stats->warnings.insert(stats->warnings.end(), job.warnings().begin(), job.warnings().end());
  if (job.streams().empty()) return Status(StatusCode::kInvalidArgument, "no readable trace files to export");
  const TimelinePlan plan = PlanTimeline(job.streams(), options.ranks);
  TimelineOptions windowed = options;
  if (Status s = ApplyStepWindow(plan, &windowed, &stats->no_step); !s.ok()) return s;
  if (format == TimelineFormat::kChrome && plan.groups.size() > 1 && !windowed.collective_chains) {
    windowed.collective_chains = std::make_shared<const CollectiveChains>(CollectiveChains::Read(plan, windowed));
  }
  std::unique_ptr<ExportOutput> out;
  if (Status s = ExportOutput::Open(path, gzip, &out); !s.ok()) return s;
  const std::string log_path = MachineCounterLogPath(path);
  std::unique_ptr<MachineCounterLog> machine;
  Status status = MachineCounterLog::Create(log_path, &machine);
  if (status.ok()) {
    const std::unique_ptr<TimelineWriter> writer = NewWriter(format, out.get());
    WritePrologue(plan, writer.get(), out.get(), stats);
    WriteGroups(plan, 0, plan.groups.size(), windowed, writer.get(), out.get(), machine.get(), stats);
    status = machine->Close();
    if (status.ok()) status = WriteEpilogue(plan, {log_path}, writer.get(), stats);
    std::remove(log_path.c_str());
  }
  return Finish(status, path, out.get(), file_bytes);
}

Status WriteTimelinePart(TimelineFormat format, const TimelinePlan& plan, std::size_t first_group,
                         std::size_t end_group, const TimelineOptions& options, const std::string& part_path, bool gzip,
                         TimelineStats* stats) {
  if (Status s = CheckOptions(options); !s.ok()) return s;
  if (first_group > end_group || end_group > plan.groups.size()) {
    return Status(StatusCode::kInvalidArgument, "groups " + std::to_string(first_group) + "-" +
                                                    std::to_string(end_group) + " are not among the job's " +
                                                    std::to_string(plan.groups.size()));
  }
  std::unique_ptr<ExportOutput> out;
  if (Status s = ExportOutput::OpenPart(part_path, gzip, &out); !s.ok()) return s;
  std::unique_ptr<MachineCounterLog> machine;
  Status status = MachineCounterLog::Create(MachineCounterLogPath(part_path), &machine);
  if (status.ok()) {
    const std::unique_ptr<TimelineWriter> writer = NewWriter(format, out.get());
    WriteGroups(plan, first_group, end_group, options, writer.get(), out.get(), machine.get(), stats);
    status = machine->Close();
  }
  return Finish(status, part_path, out.get(), nullptr);
}

Status AssembleTimeline(TimelineFormat format, const TimelinePlan& plan, const std::vector<std::string>& parts,
                        const std::string& path, bool gzip, TimelineStats* stats, std::uint64_t* file_bytes) {
  std::unique_ptr<ExportOutput> out;
  if (Status s = ExportOutput::Open(path, gzip, &out); !s.ok()) return s;
  const std::unique_ptr<TimelineWriter> writer = NewWriter(format, out.get());
  WritePrologue(plan, writer.get(), out.get(), stats);
  std::vector<std::string> logs;
  for (const std::string& part : parts) {
    out->AppendPart(part);
    logs.push_back(MachineCounterLogPath(part));
  }
  return Finish(WriteEpilogue(plan, logs, writer.get(), stats), path, out.get(), file_bytes);
}

}  // namespace smprof::analysis
