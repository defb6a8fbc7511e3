// Telling a kvsweep store from any other file before anything is written to it.
#include "store/store_identity.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace kvsweep::store {
namespace {

// The last schema version written without the application_id stamp: older files carry no
// stamp, and are recognised by their version and tables instead.
constexpr int kLastUnstampedVersion = 4;

// Tables every kvsweep store has had since schema 1.
const std::set<std::string>& kvsweep_tables() {
  static const std::set<std::string> tables = {"experiments", "cells", "requests",
                                               "metric_samples"};
  return tables;
}

std::int64_t pragma_int(const SqliteDb& db, const std::string& name) {
  SqliteStatement statement = db.prepare("PRAGMA " + name);
  statement.step();
  return statement.column_int64(0);
}

std::vector<std::string> table_names(const SqliteDb& db) {
  SqliteStatement statement = db.prepare(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
      "ORDER BY name");
  std::vector<std::string> names;
  while (statement.step()) names.push_back(statement.column_text(0));
  return names;
}

// "0x47504b47 ('GPKG')": the id, and its four bytes when they are letters (most programs pick
// a readable id: GeoPackage's GPKG, MBTiles' MPBX).
std::string describe_application_id(std::int64_t id) {
  char hex[16];
  std::snprintf(hex, sizeof hex, "0x%08llx", static_cast<unsigned long long>(id & 0xffffffff));
  std::string ascii;
  for (int shift = 24; shift >= 0; shift -= 8) {
    const auto c = static_cast<unsigned char>((id >> shift) & 0xff);
    if (!std::isprint(c)) return hex;
    ascii += static_cast<char>(c);
  }
  return std::string(hex) + " ('" + ascii + "')";
}

std::string list_tables(const std::vector<std::string>& names) {
  constexpr std::size_t kMaxListed = 8;
  if (names.empty()) return "none";
  std::string text;
  for (std::size_t i = 0; i < names.size() && i < kMaxListed; ++i) {
    text += (i ? ", " : "") + names[i];
  }
  if (names.size() > kMaxListed) text += ", ... (" + std::to_string(names.size()) + " tables)";
  return text;
}

[[noreturn]] void refuse(const SqliteDb& db, const std::string& what) {
  throw NotAStore(db.path() + ": not a kvsweep store: " + what +
                  ". kvsweep wrote nothing to it; give --db a kvsweep store or a new "
                  "file name.");
}

}  // namespace

void check_store_identity(const SqliteDb& db) {
  std::int64_t application_id = 0;
  std::int64_t version = 0;
  std::vector<std::string> tables;
  try {
    application_id = pragma_int(db, "application_id");
    version = pragma_int(db, "user_version");
    tables = table_names(db);
  } catch (const SqliteError& e) {
    if (e.not_a_database()) refuse(db, "not a SQLite database");
    throw;
  }
  if (application_id == kApplicationId) return;  // the schema version is migrate()'s to check
  if (application_id != 0) {
    refuse(db, "a SQLite database of another program (application_id " +
                   describe_application_id(application_id) + ")");
  }
  if (tables.empty() && version == 0) return;  // empty: a new store
  const bool has_kvsweep_tables =
      std::all_of(kvsweep_tables().begin(), kvsweep_tables().end(), [&](const std::string& t) {
        return std::find(tables.begin(), tables.end(), t) != tables.end();
      });
  if (version >= 1 && version <= kLastUnstampedVersion && has_kvsweep_tables) return;
  std::string what = "a SQLite database of another program (tables: " + list_tables(tables);
  if (version != 0) what += "; user_version " + std::to_string(version);
  refuse(db, what + ")");
}

}  // namespace kvsweep::store
