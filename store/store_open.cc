// Opening a store (read-write with migration, or read-only beside a writer) and its transactions.
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "store/schema.h"
#include "store/sqlite_handles.h"
#include "store/store.h"
#include "store/store_identity.h"
#include "store/store_impl.h"

namespace kvsweep::store {
namespace {

SqliteDb open_for_writing(const std::string& path, const MigrationProgress& progress) {
  SqliteDb db = SqliteDb::open(path);
  check_store_identity(db);  // before anything below writes to the file
  // WAL lets a report read while a sweep writes; NORMAL sync is durable enough under WAL
  // (a power cut may lose the last transaction, never corrupt the file).
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA foreign_keys = ON");
  migrate(db, progress);
  return db;
}

SqliteDb open_for_reading(const std::string& path, const MigrationProgress& progress) {
  SqliteDb db = SqliteDb::open_read_only(path);
  check_store_identity(db);
  check_not_newer(db);
  const int version = schema_version(db);
  if (version == 0) {
    throw std::runtime_error(path +
                             ": an empty file, no kvsweep store yet (run a scenario into it "
                             "first)");
  }
  if (version < kSchemaVersion) {
    // The queries below read columns an older schema lacks: migrate once, then read.
    try {
      open_for_writing(path, progress);
    } catch (const std::exception& e) {
      throw std::runtime_error(
          path + ": store of schema version " + std::to_string(version) +
          " must be upgraded to version " + std::to_string(kSchemaVersion) +
          " before this kvsweep reads it, which needs write access once (kvsweep --db " + path +
          " migrate): " + e.what());
    }
    db = SqliteDb::open_read_only(path);
  }
  // A second guard: no statement of this connection may write.
  db.exec("PRAGMA query_only = 1");
  return db;
}

}  // namespace

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::~Store() = default;
Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;

Store Store::open_read_only(const std::string& path, int busy_timeout_ms) {
  SqliteDb db = SqliteDb::open_read_only(path, busy_timeout_ms);
  check_store_identity(db);
  const int version = schema_version(db);
  if (version == 0) throw std::runtime_error(path + ": not a kvsweep store (no schema)");
  if (version != kSchemaVersion) {
    throw std::runtime_error(path + ": store has schema version " + std::to_string(version) +
                             ", this kvsweep reads " + std::to_string(kSchemaVersion) +
                             (version < kSchemaVersion
                                  ? "; run `kvsweep --db " + path + " migrate` to migrate it"
                                  : "; upgrade kvsweep to read it"));
  }
  db.exec("PRAGMA query_only = 1");  // no statement of this connection may write
  return Store(std::make_unique<Impl>(Impl{std::move(db)}));
}

Store Store::open(const std::string& path, Access access, const MigrationProgress& progress) {
  return Store(
      std::make_unique<Impl>(Impl{access == Access::kReadOnly ? open_for_reading(path, progress)
                                                              : open_for_writing(path, progress)}));
}

const std::string& Store::path() const { return impl_->db.path(); }

void Store::in_transaction(const std::function<void()>& body) {
  Transaction transaction(impl_->db);
  body();
  transaction.commit();
}

}  // namespace kvsweep::store
