#include "runtime/name_table.h"

#include "trace/utf8_text.h"

namespace smprof::internal {

std::string CutName(std::string_view name) { return CutText(name, NameTable::kMaxNameBytes); }

NameTable& NameTable::Get() {
  static NameTable* table = new NameTable();  // leaked on purpose
  return *table;
}

NameTable::NameTable() { names_.emplace_back("<too many distinct names>"); }

NameId NameTable::Intern(std::string_view name) {
  std::string cut;
  if (name.size() > kMaxNameBytes) {
    cut = CutName(name);
    name = cut;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = ids_.find(name); it != ids_.end()) return it->second;
  if (names_.size() >= kMaxNames || bytes_ + name.size() > kMaxTableBytes) {
    refused_.fetch_add(1, std::memory_order_relaxed);
    return kOverflowName;
  }
  if (!cut.empty()) cut_.fetch_add(1, std::memory_order_relaxed);
  const auto id = static_cast<NameId>(names_.size());
  const std::string& stored = names_.emplace_back(name);
  bytes_ += stored.size();
  ids_.emplace(stored, id);
  return id;
}

std::string NameTable::Lookup(NameId id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return id < names_.size() ? names_[id] : std::string();
}

std::size_t NameTable::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return names_.size();
}

}  // namespace smprof::internal
