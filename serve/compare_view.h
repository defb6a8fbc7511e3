// The compare page's view: `kvsweep compare A B` (experiments, or cells as EXP:CELL) as JSON,
// each change also as text for the page.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "figures/compare.h"
#include "store/store_readers.h"

namespace kvsweep::serve {

// compare_json's document for a and b ("3", "nightly" (its latest run), "3:2" a cell), with
// every metric's change, interval and verdict also as text ("+12.5%", "[+8.1%, +16.9%]",
// verdict_class "regression" ...). Throws NotFound (store_views.h) for a side the store does
// not hold.
nlohmann::ordered_json compare_view(const store::StoreReader& store, const std::string& a,
                                    const std::string& b, const figures::CompareOptions& options);

// The experiments a compare form offers: [{id, label}], newest first.
nlohmann::ordered_json experiment_choices(const store::RunReader& store);

}  // namespace kvsweep::serve
