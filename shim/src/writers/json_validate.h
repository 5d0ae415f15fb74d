// Whether a file holds exactly one well-formed JSON document, plain or
// gzip-compressed. Streams the file through a SAX parser that builds
// nothing, so memory stays bounded.
#pragma once

#include <string>

namespace chakrashim::writers {

// Empty when valid; else one line saying where parsing failed.
std::string validate_json_file(const std::string& path);

// validate_json_file, and every ET node id (the elements of the top-level
// "nodes" array) appears once: a file that another process wrote into is
// never published, however valid its JSON.
std::string validate_et_file(const std::string& path);

}  // namespace chakrashim::writers
