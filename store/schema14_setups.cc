// The migration to schema 14: every experiment's setup in the current shape.
#include "store/schema14_setups.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "store/experiment_setup.h"

namespace kvsweep::store {

void rewrite_setups(const SqliteDb& db) {
  // Read first, then write: an UPDATE while the SELECT steps the same table would be legal in
  // SQLite but would make the rows read depend on the order they are written.
  std::vector<std::pair<std::int64_t, std::string>> rewritten;
  {
    SqliteStatement select = db.prepare("SELECT id, setup_json FROM experiments");
    while (select.step()) {
      const std::string stored = select.column_text(1);
      std::string current = encode_setup(decode_setup(stored));
      if (current != stored) rewritten.emplace_back(select.column_int64(0), std::move(current));
    }
  }
  SqliteStatement update = db.prepare("UPDATE experiments SET setup_json = ? WHERE id = ?");
  for (const auto& [id, text] : rewritten) {
    update.bind_text(1, text);
    update.bind_int64(2, id);
    update.step();
    update.reset();
  }
}

}  // namespace kvsweep::store
