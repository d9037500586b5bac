#include "analysis/timeline/slice_args.h"

#include <array>
#include <utility>

#include "smprof/trace.pb.h"

namespace smprof::analysis {

namespace {

template <std::size_t N>
std::string_view Label(const std::array<std::string_view, N>& labels, std::uint32_t value, std::string_view fallback) {
  return value < N ? labels[value] : fallback;
}

void Int(std::vector<SliceArg>* args, std::string_view key, std::int64_t value) {
  SliceArg& a = args->emplace_back();
  a.key = key;
  a.int_value = value;
}

void Text(std::vector<SliceArg>* args, std::string_view key, std::string value) {
  SliceArg& a = args->emplace_back();
  a.key = key;
  a.is_string = true;
  a.string_value = std::move(value);
}

// Bytes per element of a torch dtype's name ("float32", "bfloat16", ...), 0 if unknown.
std::uint64_t ElementBytes(std::string_view dtype) {
  static constexpr std::array<std::pair<std::string_view, std::uint64_t>, 14> kSizes = {{
      {"float32", 4},
      {"bfloat16", 2},
      {"float16", 2},
      {"float64", 8},
      {"int64", 8},
      {"int32", 4},
      {"int16", 2},
      {"int8", 1},
      {"uint8", 1},
      {"bool", 1},
      {"complex64", 8},
      {"complex128", 16},
      {"float8_e4m3fn", 1},
      {"float8_e5m2", 1},
  }};
  for (const auto& [name, size] : kSizes) {
    if (name == dtype) return size;
  }
  return 0;
}

std::string Dim3(const std::uint32_t (&v)[3]) {
  return std::to_string(v[0]) + "x" + std::to_string(v[1]) + "x" + std::to_string(v[2]);
}

}  // namespace

// Indexed by the enum values of proto/smprof/trace.proto.
std::string_view PrecisionLabel(std::uint32_t precision) {
  static constexpr std::array<std::string_view, 10> kLabels = {"unknown", "fp64", "fp32", "tf32", "fp16",
                                                               "bf16",    "fp8",  "int8", "fp4",  "int4"};
  return Label(kLabels, precision, "unknown");
}

std::string_view KernelClassLabel(std::uint32_t kernel_class) {
  static constexpr std::array<std::string_view, 4> kLabels = {"", "compute", "communication", "memory"};
  return Label(kLabels, kernel_class, "");
}

std::string_view CopyKindLabel(std::uint32_t copy_kind) {
  static constexpr std::array<std::string_view, 11> kLabels = {"unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                                               "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
  return Label(kLabels, copy_kind, "unknown");
}

void CollectSliceArgs(const TimelineSlice& slice, std::vector<SliceArg>* args) {
  if (slice.api != nullptr) {
    Int(args, "correlation_id", slice.api->correlation_id);
    return;
  }
  if (slice.collective != nullptr) {
    const internal::CollectiveRow& c = *slice.collective;
    Text(args, "group", std::string(c.group));
    Int(args, "sequence", static_cast<std::int64_t>(c.sequence));
    Int(args, "group_size", c.group_size);
    Int(args, "group_rank", c.group_rank);
    Int(args, "bytes", static_cast<std::int64_t>(c.bytes));
    Text(args, "dtype", std::string(c.dtype));
    Int(args, "async_op", c.async_op ? 1 : 0);
    // The names Kineto gives them on record_param_comms, which HTA reads (its nccl:: arguments).
    std::string_view op = c.op;
    if (!op.empty() && op.back() == '_') op.remove_suffix(1);
    Text(args, "Collective name", std::string(op));
    Text(args, "Process Group Name", std::string(c.group));
    Int(args, "Group size", c.group_size);
    if (const std::uint64_t size = ElementBytes(c.dtype); size != 0) {
      Int(args, "In msg nelems", static_cast<std::int64_t>(c.bytes / size));
    }
    return;
  }
  if (slice.gpu == nullptr) return;
  const internal::GpuActivityRow& row = *slice.gpu;
  Int(args, "correlation_id", row.correlation_id);
  Int(args, "device", row.device);
  Int(args, "stream", row.stream);
  switch (row.kind) {
    case trace::GPU_KIND_KERNEL:
      Text(args, "grid", Dim3(row.grid));
      Text(args, "block", Dim3(row.block));
      Int(args, "registers_per_thread", row.registers_per_thread);
      Int(args, "shared_memory_bytes", row.shared_memory_bytes);
      Text(args, "precision", std::string(PrecisionLabel(row.precision)));
      Text(args, "class", std::string(KernelClassLabel(row.kernel_class)));
      if (row.graph_id != 0) Int(args, "graph_id", row.graph_id);
      break;
    case trace::GPU_KIND_MEMCPY:
      Int(args, "bytes", static_cast<std::int64_t>(row.bytes));
      Text(args, "copy_kind", std::string(CopyKindLabel(row.copy_kind)));
      if (row.copy_kind == trace::COPY_KIND_PTOP) Int(args, "peer_device", row.peer_device);
      break;
    case trace::GPU_KIND_MEMSET:
      Int(args, "bytes", static_cast<std::int64_t>(row.bytes));
      break;
    default:
      break;
  }
}

}  // namespace smprof::analysis
