// The event pass of common/yaml_document_scan.h.
#include "common/yaml_document_scan.h"

#include <sstream>

namespace kvsweep {

void scan_documents(const std::string& text, Scanned& out) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  int previous_start = -1;
  while (parser.HandleNextDocument(out.scan)) {
    const YAML::Mark start = out.scan.document_start();
    if (start.pos == previous_start) {
      out.stuck = start;
      return;
    }
    previous_start = start.pos;
    if (out.scan.refused()) return;
  }
}

}  // namespace kvsweep
