// Move-only RAII wrappers over the SQLite C API; the only file that touches raw sqlite3 handles.
#include "store/sqlite_handles.h"

#include <sqlite3.h>

#include <stdexcept>
#include <utility>

namespace kvsweep::store {

// A generous wait: several kvsweep processes (a sweep and a report) may share one file.
constexpr int kBusyTimeoutMs = 10000;

void SqliteDb::Closer::operator()(sqlite3* db) const { sqlite3_close_v2(db); }

SqliteDb::SqliteDb(std::unique_ptr<sqlite3, Closer> db, std::string path)
    : db_(std::move(db)), path_(std::move(path)) {}

namespace {

std::unique_ptr<sqlite3, SqliteDb::Closer> open_handle(const std::string& path, int flags,
                                                       int busy_timeout_ms) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  // sqlite3_open_v2 allocates a handle even on failure; own it before anything can throw.
  std::unique_ptr<sqlite3, SqliteDb::Closer> owned(raw);
  if (rc != SQLITE_OK) {
    const std::string reason = raw != nullptr ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
    throw std::runtime_error(path + ": cannot open store: " + reason);
  }
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, busy_timeout_ms);
  return owned;
}

}  // namespace

SqliteDb SqliteDb::open(const std::string& path) {
  return SqliteDb(open_handle(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, kBusyTimeoutMs),
                  path);
}

SqliteDb SqliteDb::open_read_only(const std::string& path, int busy_timeout_ms) {
  return SqliteDb(open_handle(path, SQLITE_OPEN_READONLY, busy_timeout_ms), path);
}

void SqliteDb::fail(const std::string& what) const {
  throw std::runtime_error(path_ + ": " + what + ": " + sqlite3_errmsg(db_.get()));
}

void SqliteDb::exec(const std::string& sql) const {
  if (sqlite3_exec(db_.get(), sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
    fail("executing \"" + sql + "\"");
  }
}

SqliteStatement SqliteDb::prepare(const std::string& sql) const {
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db_.get(), sql.c_str(), static_cast<int>(sql.size()), &raw, nullptr) !=
      SQLITE_OK) {
    sqlite3_finalize(raw);
    fail("preparing \"" + sql + "\"");
  }
  return SqliteStatement(this, raw, sql);
}

std::int64_t SqliteDb::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_.get()); }

int SqliteDb::changes() const { return sqlite3_changes(db_.get()); }

void SqliteStatement::Finalizer::operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }

SqliteStatement::SqliteStatement(const SqliteDb* db, sqlite3_stmt* stmt, std::string sql)
    : db_(db), stmt_(stmt), sql_(std::move(sql)) {}

void SqliteStatement::check_bind(int rc, int index) const {
  if (rc != SQLITE_OK) {
    db_->fail("binding parameter " + std::to_string(index) + " of \"" + sql_ + "\"");
  }
}

void SqliteStatement::bind_int64(int index, std::int64_t value) {
  check_bind(sqlite3_bind_int64(stmt_.get(), index, value), index);
}

void SqliteStatement::bind_double(int index, double value) {
  check_bind(sqlite3_bind_double(stmt_.get(), index, value), index);
}

void SqliteStatement::bind_text(int index, const std::string& value) {
  check_bind(sqlite3_bind_text(stmt_.get(), index, value.data(), static_cast<int>(value.size()),
                               SQLITE_TRANSIENT),
             index);
}

bool SqliteStatement::step() {
  const int rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_->fail("running \"" + sql_ + "\"");
}

void SqliteStatement::reset() {
  // sqlite3_reset repeats the last step's error code; step() already reported that one.
  sqlite3_reset(stmt_.get());
  sqlite3_clear_bindings(stmt_.get());
}

std::int64_t SqliteStatement::column_int64(int column) const {
  return sqlite3_column_int64(stmt_.get(), column);
}

double SqliteStatement::column_double(int column) const {
  return sqlite3_column_double(stmt_.get(), column);
}

std::string SqliteStatement::column_text(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_.get(), column);
  if (text == nullptr) return {};
  const int size = sqlite3_column_bytes(stmt_.get(), column);
  return std::string(reinterpret_cast<const char*>(text), static_cast<std::size_t>(size));
}

Transaction::Transaction(const SqliteDb& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
  if (done_) return;
  // Errors are ignored here: a failed ROLLBACK means SQLite already rolled back.
  try {
    db_.exec("ROLLBACK");
  } catch (const std::exception&) {
  }
}

void Transaction::commit() {
  db_.exec("COMMIT");
  done_ = true;
}

}  // namespace kvsweep::store
