#include "trace/gpu_codec.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <utility>

namespace smprof::internal {

namespace {

template <typename Row>
std::uint64_t Duration(const Row& r) {
  return static_cast<std::uint64_t>(std::max<std::int64_t>(r.end_ns - r.start_ns, 0));
}

// The rows of one frame's table in start order: the pending rows as they
// are when already sorted (the common case: CUPTI completes work mostly in
// order), else through a sorted index, so that 16-byte keys move instead of
// the rows.
template <typename Row>
class StartOrder {
 public:
  using Keys = std::vector<std::pair<std::int64_t, std::uint32_t>>;

  StartOrder(const Row* first, std::size_t n, Keys* keys) : first_(first), n_(n) {
    const auto by_start = [](const Row& a, const Row& b) { return a.start_ns < b.start_ns; };
    if (std::is_sorted(first, first + n, by_start)) return;
    keys->clear();
    keys->reserve(n);
    for (std::size_t i = 0; i < n; ++i) keys->emplace_back(first[i].start_ns, static_cast<std::uint32_t>(i));
    std::sort(keys->begin(), keys->end());  // the index breaks ties: arrival order
    keys_ = keys->data();
  }
  int size() const { return static_cast<int>(n_); }
  const Row& operator[](int i) const { return keys_ != nullptr ? first_[keys_[i].second] : first_[i]; }

 private:
  const Row* first_;
  std::size_t n_;
  const std::pair<std::int64_t, std::uint32_t>* keys_ = nullptr;
};

// Reserves `n` more entries in each repeated column.
template <typename... Columns>
void ReserveAll(int n, Columns*... columns) {
  (columns->Reserve(columns->size() + n), ...);
}

// `n` entries of a column, to be written through the returned pointer.
template <typename T>
T* Rows(google::protobuf::RepeatedField<T>* column, int n) {
  column->Resize(n, T{});
  return column->mutable_data();
}

// A column with one value in every row is stored as that one value, or not at
// all if it is 0 (docs/TRACE_FORMAT.md): a rank's frames mostly show one
// device and context, no copies or graphs, 1-D grids and blocks, and a
// constant column costs nothing to serialize or store.
template <typename T>
void Compact(google::protobuf::RepeatedField<T>* column) {
  if (column->empty()) return;
  const T first = column->Get(0);
  if (!std::all_of(column->begin(), column->end(), [first](T v) { return v == first; })) return;
  if (first == 0) {
    column->Clear();
  } else {
    column->Truncate(1);
  }
}

void EncodeActivities(const StartOrder<GpuActivityRecord>& rows, FrameTables* tables, trace::GpuActivities* c) {
  const int n = rows.size();
  std::int64_t* start_delta = Rows(c->mutable_start_delta_ns(), n);
  std::uint64_t* dur = Rows(c->mutable_dur_ns(), n);
  std::uint32_t* kind = Rows(c->mutable_kind(), n);
  std::uint32_t* device = Rows(c->mutable_device(), n);
  std::uint32_t* context = Rows(c->mutable_context(), n);
  std::uint32_t* stream = Rows(c->mutable_stream(), n);
  std::uint32_t* correlation = Rows(c->mutable_correlation_id(), n);
  std::uint32_t* name = Rows(c->mutable_name_index(), n);
  std::uint32_t* kernel_class = Rows(c->mutable_kernel_class(), n);
  std::uint32_t* precision = Rows(c->mutable_precision(), n);
  std::uint64_t* bytes = Rows(c->mutable_bytes(), n);
  std::uint32_t* copy_kind = Rows(c->mutable_copy_kind(), n);
  std::uint32_t* peer = Rows(c->mutable_peer_device(), n);
  std::uint32_t* src_memory = Rows(c->mutable_src_memory_kind(), n);
  std::uint32_t* dst_memory = Rows(c->mutable_dst_memory_kind(), n);
  std::uint32_t* graph = Rows(c->mutable_graph_id(), n);
  std::uint64_t* graph_node = Rows(c->mutable_graph_node_id(), n);
  std::uint32_t* grid_x = Rows(c->mutable_grid_x(), n);
  std::uint32_t* grid_y = Rows(c->mutable_grid_y(), n);
  std::uint32_t* grid_z = Rows(c->mutable_grid_z(), n);
  std::uint32_t* block_x = Rows(c->mutable_block_x(), n);
  std::uint32_t* block_y = Rows(c->mutable_block_y(), n);
  std::uint32_t* block_z = Rows(c->mutable_block_z(), n);
  std::uint32_t* shared_memory = Rows(c->mutable_shared_memory_bytes(), n);
  std::uint32_t* registers = Rows(c->mutable_registers_per_thread(), n);
  std::int64_t previous = n > 0 ? rows[0].start_ns : 0;
  c->set_base_ns(previous);
  for (int i = 0; i < n; ++i) {
    const GpuActivityRecord& r = rows[i];
    start_delta[i] = r.start_ns - previous;
    previous = r.start_ns;
    dur[i] = Duration(r);
    kind[i] = r.kind;
    device[i] = r.device;
    context[i] = r.context;
    stream[i] = r.stream;
    correlation[i] = r.correlation_id;
    name[i] = tables->Name(r.name);
    kernel_class[i] = r.kernel_class;
    precision[i] = r.precision;
    bytes[i] = r.bytes;
    copy_kind[i] = r.copy_kind;
    peer[i] = r.peer_device;
    src_memory[i] = r.src_memory_kind;
    dst_memory[i] = r.dst_memory_kind;
    graph[i] = r.graph_id;
    graph_node[i] = r.graph_node_id;
    grid_x[i] = r.grid[0];
    grid_y[i] = r.grid[1];
    grid_z[i] = r.grid[2];
    block_x[i] = r.block[0];
    block_y[i] = r.block[1];
    block_z[i] = r.block[2];
    shared_memory[i] = r.shared_memory_bytes;
    registers[i] = r.registers_per_thread;
  }
  for (auto* column : {c->mutable_kind(),
                       c->mutable_device(),
                       c->mutable_context(),
                       c->mutable_stream(),
                       c->mutable_correlation_id(),
                       c->mutable_kernel_class(),
                       c->mutable_precision(),
                       c->mutable_copy_kind(),
                       c->mutable_peer_device(),
                       c->mutable_graph_id(),
                       c->mutable_grid_x(),
                       c->mutable_grid_y(),
                       c->mutable_grid_z(),
                       c->mutable_block_x(),
                       c->mutable_block_y(),
                       c->mutable_block_z(),
                       c->mutable_shared_memory_bytes(),
                       c->mutable_registers_per_thread(),
                       c->mutable_src_memory_kind(),
                       c->mutable_dst_memory_kind()}) {
    Compact(column);
  }
  Compact(c->mutable_bytes());
  Compact(c->mutable_graph_node_id());
}

void EncodeApiCalls(const StartOrder<ApiCallRecord>& rows, FrameTables* tables, trace::ApiCalls* c) {
  const int n = rows.size();
  ReserveAll(n, c->mutable_start_delta_ns(), c->mutable_dur_ns(), c->mutable_name_index(), c->mutable_thread_index(),
             c->mutable_correlation_id(), c->mutable_domain());
  std::int64_t previous = n > 0 ? rows[0].start_ns : 0;
  c->set_base_ns(previous);
  for (int i = 0; i < n; ++i) {
    const ApiCallRecord* r = &rows[i];
    c->add_start_delta_ns(r->start_ns - previous);
    previous = r->start_ns;
    c->add_dur_ns(Duration(*r));
    c->add_name_index(tables->Name(r->name));
    c->add_thread_index(tables->Thread(r->tid));
    c->add_correlation_id(r->correlation_id);
    c->add_domain(r->domain);
  }
  Compact(c->mutable_name_index());
  Compact(c->mutable_thread_index());
  Compact(c->mutable_domain());
}

void EncodeExternalCorrelations(const ExternalCorrelationRecord* first, const ExternalCorrelationRecord* last,
                                FrameTables* tables, trace::ExternalCorrelations* c) {
  ReserveAll(static_cast<int>(last - first), c->mutable_correlation_id(), c->mutable_external_id(),
             c->mutable_external_kind(), c->mutable_name_index());
  for (const ExternalCorrelationRecord* r = first; r != last; ++r) {
    c->add_correlation_id(r->correlation_id);
    c->add_external_id(r->external_id);
    c->add_external_kind(r->external_kind);
    const bool ours = r->external_kind == kSmprofExternalCorrelationKindValue;
    c->add_name_index(ours ? tables->Name(r->name) : tables->Text(""));
  }
  Compact(c->mutable_external_id());
  Compact(c->mutable_external_kind());
  Compact(c->mutable_name_index());
}

void EncodeMarkers(const StartOrder<MarkerRecord>& rows, FrameTables* tables, trace::Markers* c) {
  const int n = rows.size();
  ReserveAll(n, c->mutable_start_delta_ns(), c->mutable_dur_ns(), c->mutable_name_index(), c->mutable_domain_index(),
             c->mutable_thread_index());
  std::int64_t previous = n > 0 ? rows[0].start_ns : 0;
  c->set_base_ns(previous);
  for (int i = 0; i < n; ++i) {
    const MarkerRecord* r = &rows[i];
    c->add_start_delta_ns(r->start_ns - previous);
    previous = r->start_ns;
    c->add_dur_ns(Duration(*r));
    c->add_name_index(tables->Name(r->name));
    c->add_domain_index(tables->Name(r->domain));
    c->add_thread_index(tables->Thread(r->tid));
  }
  Compact(c->mutable_name_index());
  Compact(c->mutable_domain_index());
  Compact(c->mutable_thread_index());
}

void EncodeOverheads(const StartOrder<OverheadRecord>& rows, FrameTables* tables, trace::Overheads* c) {
  const int n = rows.size();
  ReserveAll(n, c->mutable_start_delta_ns(), c->mutable_dur_ns(), c->mutable_name_index(), c->mutable_thread_index());
  std::int64_t previous = n > 0 ? rows[0].start_ns : 0;
  c->set_base_ns(previous);
  for (int i = 0; i < n; ++i) {
    const OverheadRecord* r = &rows[i];
    c->add_start_delta_ns(r->start_ns - previous);
    previous = r->start_ns;
    c->add_dur_ns(Duration(*r));
    c->add_name_index(tables->Name(r->name));
    c->add_thread_index(tables->Thread(r->tid));
  }
  Compact(c->mutable_name_index());
  Compact(c->mutable_thread_index());
}

// Row i of a column that may hold no value (0 in every row) or one value
// (the same in every row).
template <typename T>
T At(const google::protobuf::RepeatedField<T>& column, int i) {
  switch (column.size()) {
    case 0:
      return T{};
    case 1:
      return column.Get(0);
    default:
      return column.Get(i);
  }
}

// Sets one field of each of `n` rows from a column that may hold no value,
// one value, or one per row (see At): the choice is made once per column,
// not once per cell, which keeps the wide GPU table's decoding cheap.
template <typename T, typename Set>
void FillColumn(const google::protobuf::RepeatedField<T>& column, int n, Set set) {
  if (column.empty()) return;  // rows start value-initialized (0)
  if (column.size() == 1) {
    for (int i = 0; i < n; ++i) set(i, column.Get(0));
    return;
  }
  const T* values = column.data();
  for (int i = 0; i < n; ++i) set(i, values[i]);
}

// Checks shared by the decoders: every column as long as the first, every
// index into the frame's tables in range. Names the offending column.
class TableCheck {
 public:
  TableCheck(const trace::Frame& frame, const char* table, int rows) : frame_(frame), table_(table), rows_(rows) {}

  template <typename Column>
  bool Length(const Column& column, const char* name) {
    if (column.size() == rows_) return true;
    Fail(std::string(name) + " has " + std::to_string(column.size()) + " rows, expected " + std::to_string(rows_));
    return false;
  }
  template <typename Column>
  bool LengthOrConstant(const Column& column, const char* name) {
    return column.size() <= 1 || Length(column, name);
  }
  bool String(std::uint32_t index, const char* column) { return InRange(index, frame_.strings_size(), column); }
  bool Thread(std::uint32_t index, const char* column) { return InRange(index, frame_.threads_size(), column); }
  Status status() const { return status_; }

 private:
  bool InRange(std::uint32_t index, int size, const char* column) {
    if (index < static_cast<std::uint32_t>(size)) return true;
    Fail(std::string(column) + " " + std::to_string(index) + " out of range (" + std::to_string(size) + ")");
    return false;
  }
  void Fail(const std::string& what) {
    status_ = Status(StatusCode::kInternal,
                     "frame " + std::to_string(frame_.sequence()) + ": malformed " + table_ + " (" + what + ")");
  }

  const trace::Frame& frame_;
  const char* table_;
  const int rows_;
  Status status_ = Status::Ok();
};

}  // namespace

template <typename Row>
void GpuFrameEncoder::Pending<Row>::Add(std::vector<Row>&& more) {
  if (size() == 0) {
    rows = std::move(more);
    head = 0;
  } else {
    rows.insert(rows.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  }
}

template <typename Row>
void GpuFrameEncoder::Pending<Row>::Pop(std::size_t n) {
  head += n;
  if (head == rows.size()) {
    rows.clear();
    head = 0;
  } else if (head * 2 >= rows.size()) {
    // Frames are cut off the front in place: a large backlog costs linear time.
    rows.erase(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(head));
    head = 0;
  }
}

void GpuFrameEncoder::Add(GpuBatch&& batch) {
  activities_.Add(std::move(batch.activities));
  api_calls_.Add(std::move(batch.api_calls));
  external_correlations_.Add(std::move(batch.external_correlations));
  markers_.Add(std::move(batch.markers));
  overheads_.Add(std::move(batch.overheads));
  for (GpuDeviceInfo& device : batch.devices) {
    const std::uint32_t id = device.id;
    auto [it, added] = devices_.try_emplace(id);
    if (!added && it->second.uuid == device.uuid && it->second.name == device.name) continue;
    it->second = std::move(device);
    unsent_devices_.push_back(id);
  }
  for (const GpuContextInfo& context : batch.contexts) {
    auto [it, added] = contexts_.try_emplace(context.id, context);
    if (!added && it->second.device == context.device) continue;
    it->second = context;
    unsent_contexts_.push_back(context.id);
  }
}

std::size_t GpuFrameEncoder::size() const {
  return activities_.size() + api_calls_.size() + external_correlations_.size() + markers_.size() + overheads_.size() +
         unsent_devices_.size() + unsent_contexts_.size();
}

void GpuFrameEncoder::ResendMetadata() {
  unsent_devices_.clear();
  unsent_contexts_.clear();
  for (const auto& [id, device] : devices_) unsent_devices_.push_back(id);
  for (const auto& [id, context] : contexts_) unsent_contexts_.push_back(id);
  std::sort(unsent_devices_.begin(), unsent_devices_.end());
  std::sort(unsent_contexts_.begin(), unsent_contexts_.end());
}

namespace {

// How many of the next `n` rows fit the frame's string budget
// (FrameTables::kStringBudgetBytes): their names enter the frame's strings as
// they are counted, the rows past the budget wait for the next frame.
template <typename Row>
std::size_t WithinStringBudget(const Row* rows, std::size_t n, FrameTables* tables) {
  std::size_t k = 0;
  while (k < n && tables->string_bytes() < FrameTables::kStringBudgetBytes) tables->Name(rows[k++].name);
  return k;
}

// The same for external correlations, whose name is in the frame only when the id is smprof's.
std::size_t WithinStringBudget(const ExternalCorrelationRecord* rows, std::size_t n, FrameTables* tables) {
  std::size_t k = 0;
  for (; k < n && tables->string_bytes() < FrameTables::kStringBudgetBytes; ++k) {
    if (rows[k].external_kind == kSmprofExternalCorrelationKindValue) tables->Name(rows[k].name);
  }
  return k;
}

}  // namespace

template <typename Row, typename Table, typename EncodeFn>
std::uint64_t GpuFrameEncoder::Encode(Pending<Row>* pending, std::size_t limit, FrameTables* tables, Table* table,
                                      EncodeFn encode) {
  const std::size_t n =
      WithinStringBudget(pending->rows.data() + pending->head, std::min(limit, pending->size()), tables);
  encode(StartOrder<Row>(pending->rows.data() + pending->head, n, &sort_keys_), tables, table);
  pending->Pop(n);
  return n;
}

std::uint64_t GpuFrameEncoder::Build(FrameTables* tables, trace::Frame* frame, std::size_t limit) {
  std::uint64_t rows = 0;
  if (activities_.size() > 0) {
    rows += Encode(&activities_, limit, tables, frame->mutable_gpu(), EncodeActivities);
  }
  if (api_calls_.size() > 0) {
    rows += Encode(&api_calls_, limit, tables, frame->mutable_api_calls(), EncodeApiCalls);
  }
  if (external_correlations_.size() > 0) {
    const ExternalCorrelationRecord* first = external_correlations_.rows.data() + external_correlations_.head;
    const std::size_t n = WithinStringBudget(first, std::min(limit, external_correlations_.size()), tables);
    EncodeExternalCorrelations(first, first + n, tables, frame->mutable_external_correlations());
    rows += n;
    external_correlations_.Pop(n);
  }
  if (markers_.size() > 0) {
    rows += Encode(&markers_, limit, tables, frame->mutable_markers(), EncodeMarkers);
  }
  if (overheads_.size() > 0) {
    rows += Encode(&overheads_, limit, tables, frame->mutable_overheads(), EncodeOverheads);
  }
  for (std::uint32_t id : unsent_devices_) {
    const GpuDeviceInfo& d = devices_.at(id);
    trace::GpuDevice* device = frame->add_devices();
    device->set_id(d.id);
    device->set_name(d.name);
    device->set_uuid(d.uuid);
    device->set_sm_count(d.sm_count);
    device->set_global_memory_bytes(d.global_memory_bytes);
    device->set_compute_capability_major(d.compute_capability_major);
    device->set_compute_capability_minor(d.compute_capability_minor);
    device->set_global_memory_bandwidth_kbps(d.global_memory_bandwidth_kbps);
    device->set_max_threads_per_block(d.max_threads_per_block);
  }
  for (std::uint32_t id : unsent_contexts_) {
    trace::GpuContext* context = frame->add_contexts();
    context->set_id(id);
    context->set_device(contexts_.at(id).device);
  }
  unsent_devices_.clear();
  unsent_contexts_.clear();
  return rows;
}

Status DecodeGpuActivities(const trace::Frame& frame, std::vector<GpuActivityRow>* rows) {
  const trace::GpuActivities& c = frame.gpu();
  const int n = c.start_delta_ns_size();
  TableCheck check(frame, "gpu", n);
  // Past dur_ns and name_index, a column may hold no value (0 in every row)
  // or one (the same in every row).
  if (!(check.Length(c.dur_ns(), "dur_ns") && check.Length(c.name_index(), "name_index") &&
        check.LengthOrConstant(c.kind(), "kind") && check.LengthOrConstant(c.device(), "device") &&
        check.LengthOrConstant(c.context(), "context") && check.LengthOrConstant(c.stream(), "stream") &&
        check.LengthOrConstant(c.correlation_id(), "correlation_id") &&
        check.LengthOrConstant(c.kernel_class(), "kernel_class") &&
        check.LengthOrConstant(c.precision(), "precision") && check.LengthOrConstant(c.bytes(), "bytes") &&
        check.LengthOrConstant(c.copy_kind(), "copy_kind") && check.LengthOrConstant(c.peer_device(), "peer_device") &&
        check.LengthOrConstant(c.graph_id(), "graph_id") &&
        check.LengthOrConstant(c.graph_node_id(), "graph_node_id") && check.LengthOrConstant(c.grid_x(), "grid_x") &&
        check.LengthOrConstant(c.grid_y(), "grid_y") && check.LengthOrConstant(c.grid_z(), "grid_z") &&
        check.LengthOrConstant(c.block_x(), "block_x") && check.LengthOrConstant(c.block_y(), "block_y") &&
        check.LengthOrConstant(c.block_z(), "block_z") &&
        check.LengthOrConstant(c.shared_memory_bytes(), "shared_memory_bytes") &&
        check.LengthOrConstant(c.registers_per_thread(), "registers_per_thread") &&
        check.LengthOrConstant(c.src_memory_kind(), "src_memory_kind") &&
        check.LengthOrConstant(c.dst_memory_kind(), "dst_memory_kind"))) {
    return check.status();
  }
  const std::size_t first = rows->size();
  rows->resize(first + static_cast<std::size_t>(n));
  GpuActivityRow* out = rows->data() + first;
  std::int64_t start = c.base_ns();
  for (int i = 0; i < n; ++i) {
    if (!check.String(c.name_index(i), "name_index")) {
      rows->resize(first);
      return check.status();
    }
    start += c.start_delta_ns(i);
    out[i].start_ns = start;
    out[i].dur_ns = static_cast<std::int64_t>(c.dur_ns(i));
    out[i].name = frame.strings(static_cast<int>(c.name_index(i)));
    out[i].name_index = c.name_index(i);
  }
  FillColumn(c.bytes(), n, [out](int i, std::uint64_t v) { out[i].bytes = v; });
  FillColumn(c.graph_node_id(), n, [out](int i, std::uint64_t v) { out[i].graph_node_id = v; });
  FillColumn(c.kind(), n, [out](int i, std::uint32_t v) { out[i].kind = v; });
  FillColumn(c.device(), n, [out](int i, std::uint32_t v) { out[i].device = v; });
  FillColumn(c.context(), n, [out](int i, std::uint32_t v) { out[i].context = v; });
  FillColumn(c.stream(), n, [out](int i, std::uint32_t v) { out[i].stream = v; });
  FillColumn(c.correlation_id(), n, [out](int i, std::uint32_t v) { out[i].correlation_id = v; });
  FillColumn(c.kernel_class(), n, [out](int i, std::uint32_t v) { out[i].kernel_class = v; });
  FillColumn(c.precision(), n, [out](int i, std::uint32_t v) { out[i].precision = v; });
  FillColumn(c.copy_kind(), n, [out](int i, std::uint32_t v) { out[i].copy_kind = v; });
  FillColumn(c.peer_device(), n, [out](int i, std::uint32_t v) { out[i].peer_device = v; });
  FillColumn(c.src_memory_kind(), n, [out](int i, std::uint32_t v) { out[i].src_memory_kind = v; });
  FillColumn(c.dst_memory_kind(), n, [out](int i, std::uint32_t v) { out[i].dst_memory_kind = v; });
  FillColumn(c.graph_id(), n, [out](int i, std::uint32_t v) { out[i].graph_id = v; });
  FillColumn(c.grid_x(), n, [out](int i, std::uint32_t v) { out[i].grid[0] = v; });
  FillColumn(c.grid_y(), n, [out](int i, std::uint32_t v) { out[i].grid[1] = v; });
  FillColumn(c.grid_z(), n, [out](int i, std::uint32_t v) { out[i].grid[2] = v; });
  FillColumn(c.block_x(), n, [out](int i, std::uint32_t v) { out[i].block[0] = v; });
  FillColumn(c.block_y(), n, [out](int i, std::uint32_t v) { out[i].block[1] = v; });
  FillColumn(c.block_z(), n, [out](int i, std::uint32_t v) { out[i].block[2] = v; });
  FillColumn(c.shared_memory_bytes(), n, [out](int i, std::uint32_t v) { out[i].shared_memory_bytes = v; });
  FillColumn(c.registers_per_thread(), n, [out](int i, std::uint32_t v) { out[i].registers_per_thread = v; });
  return Status::Ok();
}

Status DecodeApiCalls(const trace::Frame& frame, std::vector<ApiCallRow>* rows) {
  const trace::ApiCalls& c = frame.api_calls();
  const int n = c.start_delta_ns_size();
  TableCheck check(frame, "api_calls", n);
  if (!(check.Length(c.dur_ns(), "dur_ns") && check.LengthOrConstant(c.name_index(), "name_index") &&
        check.LengthOrConstant(c.thread_index(), "thread_index") &&
        check.Length(c.correlation_id(), "correlation_id") && check.LengthOrConstant(c.domain(), "domain"))) {
    return check.status();
  }
  rows->reserve(rows->size() + static_cast<std::size_t>(n));
  std::int64_t start = c.base_ns();
  for (int i = 0; i < n; ++i) {
    const std::uint32_t name = At(c.name_index(), i);
    const std::uint32_t thread = At(c.thread_index(), i);
    if (!check.String(name, "name_index") || !check.Thread(thread, "thread_index")) return check.status();
    start += c.start_delta_ns(i);
    rows->push_back(ApiCallRow{start, static_cast<std::int64_t>(c.dur_ns(i)), frame.strings(static_cast<int>(name)),
                               frame.threads(static_cast<int>(thread)).tid(), c.correlation_id(i), At(c.domain(), i)});
  }
  return Status::Ok();
}

Status DecodeMarkers(const trace::Frame& frame, std::vector<MarkerRow>* rows) {
  const trace::Markers& c = frame.markers();
  const int n = c.start_delta_ns_size();
  TableCheck check(frame, "markers", n);
  if (!(check.Length(c.dur_ns(), "dur_ns") && check.LengthOrConstant(c.name_index(), "name_index") &&
        check.LengthOrConstant(c.domain_index(), "domain_index") &&
        check.LengthOrConstant(c.thread_index(), "thread_index"))) {
    return check.status();
  }
  rows->reserve(rows->size() + static_cast<std::size_t>(n));
  std::int64_t start = c.base_ns();
  for (int i = 0; i < n; ++i) {
    const std::uint32_t name = At(c.name_index(), i);
    const std::uint32_t domain = At(c.domain_index(), i);
    const std::uint32_t thread = At(c.thread_index(), i);
    if (!check.String(name, "name_index") || !check.String(domain, "domain_index") ||
        !check.Thread(thread, "thread_index")) {
      return check.status();
    }
    start += c.start_delta_ns(i);
    rows->push_back(MarkerRow{start, static_cast<std::int64_t>(c.dur_ns(i)), frame.strings(static_cast<int>(name)),
                              frame.strings(static_cast<int>(domain)), frame.threads(static_cast<int>(thread)).tid()});
  }
  return Status::Ok();
}

Status DecodeOverheads(const trace::Frame& frame, std::vector<OverheadRow>* rows) {
  const trace::Overheads& c = frame.overheads();
  const int n = c.start_delta_ns_size();
  TableCheck check(frame, "overheads", n);
  if (!(check.Length(c.dur_ns(), "dur_ns") && check.LengthOrConstant(c.name_index(), "name_index") &&
        check.LengthOrConstant(c.thread_index(), "thread_index"))) {
    return check.status();
  }
  rows->reserve(rows->size() + static_cast<std::size_t>(n));
  std::int64_t start = c.base_ns();
  for (int i = 0; i < n; ++i) {
    const std::uint32_t name = At(c.name_index(), i);
    const std::uint32_t thread = At(c.thread_index(), i);
    if (!check.String(name, "name_index") || !check.Thread(thread, "thread_index")) return check.status();
    start += c.start_delta_ns(i);
    rows->push_back(OverheadRow{start, static_cast<std::int64_t>(c.dur_ns(i)), frame.strings(static_cast<int>(name)),
                                frame.threads(static_cast<int>(thread)).tid()});
  }
  return Status::Ok();
}

Status DecodeExternalCorrelations(const trace::Frame& frame, std::vector<ExternalCorrelationRow>* rows) {
  const trace::ExternalCorrelations& c = frame.external_correlations();
  const int n = c.correlation_id_size();
  TableCheck check(frame, "external_correlations", n);
  if (!(check.LengthOrConstant(c.external_id(), "external_id") &&
        check.LengthOrConstant(c.external_kind(), "external_kind") &&
        check.LengthOrConstant(c.name_index(), "name_index"))) {
    return check.status();
  }
  rows->reserve(rows->size() + static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const std::uint32_t name = At(c.name_index(), i);
    if (!check.String(name, "name_index")) return check.status();
    rows->push_back(ExternalCorrelationRow{c.correlation_id(i), At(c.external_id(), i), At(c.external_kind(), i),
                                           frame.strings(static_cast<int>(name))});
  }
  return Status::Ok();
}

}  // namespace smprof::internal
