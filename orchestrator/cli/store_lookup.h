// Finding what a subcommand names in the store (an experiment by id or name, a cell as
// EXP:CELL) and writing its output files; shared by the sweep and report subcommands.
#pragma once

#include <string>

#include "store/store.h"

namespace kvsweep::orchestrator {

// Opens the store at path for reading only; throws std::invalid_argument when there is no file
// there (a report never creates one).
store::Store open_existing_store(const std::string& path);

// "" = the latest experiment; digits = by id, else by name (the latest of that name);
// NAME~N = the Nth run of that name before its latest (NAME~1: the one before).
// Throws std::invalid_argument naming the store, with "did you mean" for a mistyped name.
store::ExperimentRow resolve_experiment(const store::RunReader& store, const std::string& which);

// "EXP:CELL": an experiment as above and a cell by its 1-based position, as `kvsweep runs
// EXP` lists it. Throws std::invalid_argument.
store::CellRow resolve_cell(const store::RunReader& store, const std::string& which);

// A file name made of the experiment name: letters, digits, '-', '_' and '.'; others become '-'.
std::string file_stem(const std::string& name);

// Creates parent directories, then writes the file whole or not at all (a temporary file
// renamed over it: never a half-written or empty report); throws std::runtime_error when the
// file cannot be written.
void write_file(const std::string& path, const std::string& text);

}  // namespace kvsweep::orchestrator
