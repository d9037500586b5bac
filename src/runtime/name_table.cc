#include "runtime/name_table.h"

namespace smprof::internal {

NameTable& NameTable::Get() {
  static NameTable* table = new NameTable();  // leaked on purpose
  return *table;
}

NameTable::NameTable() { names_.emplace_back("<too many distinct names>"); }

NameId NameTable::Intern(std::string_view name) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = ids_.find(name); it != ids_.end()) return it->second;
  if (names_.size() >= kMaxNames) return kOverflowName;
  const auto id = static_cast<NameId>(names_.size());
  const std::string& stored = names_.emplace_back(name);
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
