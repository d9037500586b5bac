#include "analysis/tables/job_tables.h"

#include <cassert>
#include <stdexcept>

#include "analysis/job/step_matcher.h"
#include "analysis/job/summary_options.h"
#include "trace/collective_codec.h"
#include "trace/frame_codec.h"
#include "trace/gpu_codec.h"

namespace smprof::analysis {

namespace {

using Type = Column::Type;

const char* CopyKindName(std::uint32_t kind) {
  static const char* const kNames[] = {"unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                       "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
  return kind < sizeof kNames / sizeof kNames[0] ? kNames[kind] : "unknown";
}

const char* PrecisionName(std::uint32_t precision) {
  static const char* const kNames[] = {"unknown", "FP64", "FP32", "TF32", "FP16", "BF16", "FP8", "INT8", "FP4", "INT4"};
  return precision < sizeof kNames / sizeof kNames[0] ? kNames[precision] : "unknown";
}

class TableBuilder : public FrameVisitor {
 public:
  // With `on_batch`, a table's rows are handed over (and dropped) whenever it
  // holds `batch_rows` of them and at the end of each stream.
  TableBuilder(const std::string& step_pattern, const std::set<std::string>& wanted, JobTables* tables,
               std::size_t batch_rows = 0, TableBatchSink on_batch = nullptr, StreamEndSink on_stream_end = nullptr)
      : steps_matcher_(step_pattern),
        tables_(*tables),
        batch_rows_(batch_rows),
        on_batch_(std::move(on_batch)),
        on_stream_end_(std::move(on_stream_end)) {
    tables_.emplace("annotations", ColumnTable{{"host", Type::kString},
                                               {"rank", Type::kInt},
                                               {"pid", Type::kInt},
                                               {"name", Type::kString},
                                               {"tid", Type::kInt},
                                               {"depth", Type::kInt},
                                               {"start_wall_ns", Type::kInt},
                                               {"end_wall_ns", Type::kInt},
                                               {"dur_ns", Type::kInt}});
    tables_.emplace("steps", ColumnTable{{"host", Type::kString},
                                         {"rank", Type::kInt},
                                         {"pid", Type::kInt},
                                         {"step", Type::kInt},
                                         {"name", Type::kString},
                                         {"start_wall_ns", Type::kInt},
                                         {"end_wall_ns", Type::kInt},
                                         {"dur_ns", Type::kInt}});
    tables_.emplace("kernels", ColumnTable{{"host", Type::kString},
                                           {"rank", Type::kInt},
                                           {"pid", Type::kInt},
                                           {"name", Type::kString},
                                           {"device", Type::kInt},
                                           {"stream", Type::kInt},
                                           {"correlation_id", Type::kInt},
                                           {"precision", Type::kString},
                                           {"start_wall_ns", Type::kInt},
                                           {"end_wall_ns", Type::kInt},
                                           {"dur_ns", Type::kInt}});
    tables_.emplace("copies", ColumnTable{{"host", Type::kString},
                                          {"rank", Type::kInt},
                                          {"pid", Type::kInt},
                                          {"kind", Type::kString},
                                          {"copy_kind", Type::kString},
                                          {"bytes", Type::kInt},
                                          {"device", Type::kInt},
                                          {"stream", Type::kInt},
                                          {"correlation_id", Type::kInt},
                                          {"start_wall_ns", Type::kInt},
                                          {"end_wall_ns", Type::kInt},
                                          {"dur_ns", Type::kInt}});
    tables_.emplace("api_calls", ColumnTable{{"host", Type::kString},
                                             {"rank", Type::kInt},
                                             {"pid", Type::kInt},
                                             {"name", Type::kString},
                                             {"tid", Type::kInt},
                                             {"correlation_id", Type::kInt},
                                             {"start_wall_ns", Type::kInt},
                                             {"end_wall_ns", Type::kInt},
                                             {"dur_ns", Type::kInt}});
    tables_.emplace("counters", ColumnTable{{"host", Type::kString},
                                            {"rank", Type::kInt},
                                            {"pid", Type::kInt},
                                            {"name", Type::kString},
                                            {"unit", Type::kString},
                                            {"ts_wall_ns", Type::kInt},
                                            {"value", Type::kDouble}});
    tables_.emplace("collectives", ColumnTable{{"host", Type::kString},
                                               {"rank", Type::kInt},
                                               {"pid", Type::kInt},
                                               {"op", Type::kString},
                                               {"group", Type::kString},
                                               {"group_size", Type::kInt},
                                               {"group_rank", Type::kInt},
                                               {"sequence", Type::kInt},
                                               {"bytes", Type::kInt},
                                               {"dtype", Type::kString},
                                               {"async_op", Type::kInt},
                                               {"tid", Type::kInt},
                                               {"start_wall_ns", Type::kInt},
                                               {"end_wall_ns", Type::kInt},
                                               {"dur_ns", Type::kInt},
                                               {"wait_start_wall_ns", Type::kInt},
                                               {"wait_dur_ns", Type::kInt}});
    for (auto it = tables_.begin(); it != tables_.end();) {
      it = wanted.empty() || wanted.count(it->first) ? std::next(it) : tables_.erase(it);
    }
  }

  void BeginStream(const ProcessStream& stream) override {
    stream_ = &stream;
    next_ordinal_ = 0;
  }

  void OnFrame(const TraceFileEntry& file, const trace::Frame& frame) override {
    const std::int64_t offset = file.wall_offset_ns;
    ColumnTable* const annotations = Find("annotations");
    ColumnTable* const steps = Find("steps");
    annotations_.clear();
    if ((annotations || steps) && Check(internal::DecodeAnnotations(frame, &annotations_), file)) {
      for (const auto& row : annotations_) {
        if (annotations) {
          Process(*annotations)
              .String(row.name)
              .Int(row.tid)
              .Int(row.depth)
              .Int(row.start_ns + offset)
              .Int(row.start_ns + row.dur_ns + offset)
              .Int(row.dur_ns);
        }
        std::int64_t number = -1;
        if (steps && steps_matcher_.Match(row.name, &number)) {
          const std::int64_t ordinal = next_ordinal_++;
          Process(*steps)
              .Int(number >= 0 ? number : ordinal)
              .String(row.name)
              .Int(row.start_ns + offset)
              .Int(row.start_ns + row.dur_ns + offset)
              .Int(row.dur_ns);
        }
      }
    }
    ColumnTable* const counters = Find("counters");
    counters_.clear();
    if (counters && Check(internal::DecodeCounters(frame, &counters_), file)) {
      for (const auto& row : counters_) {
        Process(*counters).String(row.name).String(row.unit).Int(row.ts_ns + offset).Double(row.value);
      }
    }
    ColumnTable* const collectives = Find("collectives");
    if (frame.has_collectives() && collectives) {
      collectives_.clear();
      if (Check(internal::DecodeCollectives(frame, &collectives_), file)) {
        for (const auto& row : collectives_) {
          Process(*collectives)
              .String(row.op)
              .String(row.group)
              .Int(row.group_size)
              .Int(row.group_rank)
              .Int(static_cast<std::int64_t>(row.sequence))
              .Int(static_cast<std::int64_t>(row.bytes))
              .String(row.dtype)
              .Int(row.async_op ? 1 : 0)
              .Int(row.tid)
              .Int(row.start_ns + offset)
              .Int(row.start_ns + row.call_dur_ns + offset)
              .Int(row.call_dur_ns)
              .Int(row.wait_offset_ns != 0 ? row.start_ns + row.wait_offset_ns + offset : 0)
              .Int(row.wait_dur_ns);
        }
      }
    }
    if (frame.has_gpu() && (Find("kernels") || Find("copies"))) {
      activities_.clear();
      if (Check(internal::DecodeGpuActivities(frame, &activities_), file)) {
        for (const auto& row : activities_) AddActivity(row, offset);
      }
    }
    ColumnTable* const api_calls = Find("api_calls");
    if (frame.has_api_calls() && api_calls) {
      api_calls_.clear();
      if (Check(internal::DecodeApiCalls(frame, &api_calls_), file)) {
        for (const auto& row : api_calls_) {
          Process(*api_calls)
              .String(row.name)
              .Int(row.tid)
              .Int(row.correlation_id)
              .Int(row.start_ns + offset)
              .Int(row.start_ns + row.dur_ns + offset)
              .Int(row.dur_ns);
        }
      }
    }
  }

  void EndFile(const FileReadResult&) override {}

  void EndStream() override {
    if (!on_batch_) return;
    for (auto& [name, table] : tables_) {
      if (table.rows() > 0) Flush(name, table);
    }
    if (on_stream_end_) on_stream_end_(*stream_);
  }

  std::vector<std::string> warnings;

 private:
  ColumnTable* Find(const char* name) {
    const auto it = tables_.find(name);
    return it == tables_.end() ? nullptr : &it->second;
  }

  // Starts a row of `table` with the stream's columns; a full batch is handed over first.
  ColumnTable& Process(ColumnTable& table) {
    if (on_batch_ && table.rows() >= batch_rows_) {
      for (auto& [name, candidate] : tables_) {
        if (&candidate == &table) Flush(name, table);
      }
    }
    return table.String(stream_->host).Int(stream_->rank).Int(stream_->pid);
  }

  void Flush(const std::string& name, ColumnTable& table) {
    on_batch_(name, *stream_, table);
    table.Clear();
  }

  bool Check(const Status& status, const TraceFileEntry& file) {
    if (!status.ok()) warnings.push_back(file.path + ": frame skipped in part: " + status.message());
    return status.ok();
  }

  void AddActivity(const internal::GpuActivityRow& row, std::int64_t offset) {
    ColumnTable* const kernels = Find("kernels");
    ColumnTable* const copies = Find("copies");
    if (row.kind == trace::GPU_KIND_KERNEL && kernels) {
      Process(*kernels)
          .String(row.name)
          .Int(row.device)
          .Int(row.stream)
          .Int(row.correlation_id)
          .String(PrecisionName(row.precision))
          .Int(row.start_ns + offset)
          .Int(row.start_ns + row.dur_ns + offset)
          .Int(row.dur_ns);
    } else if ((row.kind == trace::GPU_KIND_MEMCPY || row.kind == trace::GPU_KIND_MEMSET) && copies) {
      const bool memset = row.kind == trace::GPU_KIND_MEMSET;
      Process(*copies)
          .String(memset ? "memset" : "memcpy")
          .String(memset ? "" : CopyKindName(row.copy_kind))
          .Int(static_cast<std::int64_t>(row.bytes))
          .Int(row.device)
          .Int(row.stream)
          .Int(row.correlation_id)
          .Int(row.start_ns + offset)
          .Int(row.start_ns + row.dur_ns + offset)
          .Int(row.dur_ns);
    }
  }

  StepMatcher steps_matcher_;
  JobTables& tables_;
  const std::size_t batch_rows_;
  const TableBatchSink on_batch_;
  const StreamEndSink on_stream_end_;
  const ProcessStream* stream_ = nullptr;
  std::int64_t next_ordinal_ = 0;
  std::vector<internal::AnnotationRow> annotations_;
  std::vector<internal::CounterRow> counters_;
  std::vector<internal::GpuActivityRow> activities_;
  std::vector<internal::ApiCallRow> api_calls_;
  std::vector<internal::CollectiveRow> collectives_;
};

}  // namespace

ColumnTable::ColumnTable(std::initializer_list<std::pair<const char*, Column::Type>> schema) {
  for (const auto& [name, type] : schema) {
    columns_.emplace_back();
    columns_.back().name = name;
    columns_.back().type = type;
  }
}

std::size_t ColumnTable::rows() const {
  const Column& first = columns_.front();
  switch (first.type) {
    case Column::Type::kInt:
      return first.ints.size();
    case Column::Type::kDouble:
      return first.doubles.size();
    case Column::Type::kString:
      return first.strings.size();
  }
  return 0;
}

void ColumnTable::Clear() {
  for (Column& column : columns_) {
    column.ints.clear();
    column.doubles.clear();
    column.strings.clear();
  }
  next_ = 0;
}

Column& ColumnTable::Next(Column::Type type) {
  Column& column = columns_[next_];
  assert(column.type == type);
  (void)type;
  next_ = (next_ + 1) % columns_.size();
  return column;
}

JobTables ReadJobTables(const std::vector<std::string>& paths, const std::string& step_pattern,
                        const std::set<std::string>& wanted, std::vector<std::string>* warnings) {
  JobTables tables;
  TableBuilder builder(step_pattern, wanted, &tables);
  JobReader reader(paths);
  reader.Read(builder);
  *warnings = reader.warnings();
  warnings->insert(warnings->end(), builder.warnings.begin(), builder.warnings.end());
  return tables;
}

JobTables EmptyJobTables() {
  JobTables tables;
  TableBuilder builder(kDefaultStepPattern, {}, &tables);
  return tables;
}

void ReadStreamTableBatches(const std::vector<ProcessStream>& streams, const std::string& step_pattern,
                            const std::set<std::string>& wanted, std::size_t batch_rows, const TableBatchSink& on_batch,
                            const StreamEndSink& on_stream_end, std::vector<std::string>* warnings) {
  if (batch_rows == 0) throw std::invalid_argument("batch_rows: must be >= 1");
  JobTables tables;
  TableBuilder builder(step_pattern, wanted, &tables, batch_rows, on_batch, on_stream_end);
  for (const ProcessStream& stream : streams) ReadStream(stream, builder, warnings);
  warnings->insert(warnings->end(), builder.warnings.begin(), builder.warnings.end());
}

void ReadJobTableBatches(const std::vector<std::string>& paths, const std::string& step_pattern,
                         const std::set<std::string>& wanted, std::size_t batch_rows, const TableBatchSink& on_batch,
                         const StreamEndSink& on_stream_end, std::vector<std::string>* warnings) {
  const JobReader reader(paths);
  *warnings = reader.warnings();
  ReadStreamTableBatches(reader.streams(), step_pattern, wanted, batch_rows, on_batch, on_stream_end, warnings);
}

}  // namespace smprof::analysis
