// ReadJobTables: every event of a job as column tables for notebooks
// (smppy.analysis.load; docs/ANALYSIS.md lists the tables and columns).
// Unlike the summary this holds every event in memory, by design.
// ReadJobTableBatches: the same rows in bounded batches, for exports that
// stream (smprof export --format parquet, docs/EXPORT.md).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "analysis/job/job_reader.h"

namespace smprof::analysis {

struct Column {
  enum class Type { kInt, kDouble, kString };
  std::string name;
  Type type = Type::kInt;
  std::vector<std::int64_t> ints;
  std::vector<double> doubles;
  std::vector<std::string> strings;
};

// A table whose rows are appended one value per column, in column order.
class ColumnTable {
 public:
  ColumnTable(std::initializer_list<std::pair<const char*, Column::Type>> schema);
  ColumnTable& Int(std::int64_t value) { return Next(Column::Type::kInt).ints.push_back(value), *this; }
  ColumnTable& Double(double value) { return Next(Column::Type::kDouble).doubles.push_back(value), *this; }
  ColumnTable& String(std::string_view value) { return Next(Column::Type::kString).strings.emplace_back(value), *this; }
  const std::vector<Column>& columns() const { return columns_; }
  std::size_t rows() const;
  // Drops every row, keeping the schema (and the columns' capacity).
  void Clear();

 private:
  Column& Next(Column::Type type);
  std::vector<Column> columns_;
  std::size_t next_ = 0;
};

// By table name: "annotations", "steps", "kernels", "copies", "api_calls", "counters", "collectives".
using JobTables = std::map<std::string, ColumnTable>;

// The tables named in `wanted` (all when empty); only what they need is
// decoded. Throws std::regex_error for a bad step pattern. Damaged files add
// to `warnings`.
JobTables ReadJobTables(const std::vector<std::string>& paths, const std::string& step_pattern,
                        const std::set<std::string>& wanted, std::vector<std::string>* warnings);

// Every table with its columns and no rows: the schema of ReadJobTables.
JobTables EmptyJobTables();

// Receives each batch: at most `batch_rows` rows of one table, all from one process stream.
using TableBatchSink =
    std::function<void(const std::string& table, const ProcessStream& stream, const ColumnTable& batch)>;
// Called after a process stream's last batch.
using StreamEndSink = std::function<void(const ProcessStream& stream)>;

// The rows of ReadJobTables, in the same order, handed to `on_batch` as they are
// read: memory is bounded by `batch_rows` per table, whatever the job's size.
// Throws std::regex_error for a bad step pattern, std::invalid_argument for
// batch_rows 0. Damaged files add to `warnings`.
void ReadJobTableBatches(const std::vector<std::string>& paths, const std::string& step_pattern,
                         const std::set<std::string>& wanted, std::size_t batch_rows, const TableBatchSink& on_batch,
                         const StreamEndSink& on_stream_end, std::vector<std::string>* warnings);

// ReadJobTableBatches for some process streams of a job (JobReader::streams,
// as smppy hands them to worker processes): their rows in the same order and
// batches. Damaged files and frames add to `warnings`.
void ReadStreamTableBatches(const std::vector<ProcessStream>& streams, const std::string& step_pattern,
                            const std::set<std::string>& wanted, std::size_t batch_rows, const TableBatchSink& on_batch,
                            const StreamEndSink& on_stream_end, std::vector<std::string>* warnings);

}  // namespace smprof::analysis
