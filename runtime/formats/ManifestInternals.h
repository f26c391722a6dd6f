//===- ManifestInternals.h - What the manifest's files share ----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Reading and writing the manifest (Manifest.h) are split by concern: the
// semantic checks (ManifestChecks.cpp), the JSON encoding and decoding
// (ManifestJson.cpp), the content hash (ManifestHash.cpp) and the file
// itself (ManifestFile.cpp). These are the declarations they share; nothing
// outside this folder sees them.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RUNTIME_FORMATS_MANIFESTINTERNALS_H
#define DTENSOR_RUNTIME_FORMATS_MANIFESTINTERNALS_H

#include "dtensor/Formats/Manifest.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <utility>

namespace dtensor::rt {

/// The top-level member holding the content hash.
inline constexpr const char *kContentHashKey = "content_hash";

/// `name` in the directory `dir` ("" for the current one).
std::string joinPath(const std::string &dir, const std::string &name);

/// The JSON paths that errors name: `path[index]` and `path.key`.
std::string indexPath(const std::string &path, size_t index);
std::string keyPath(const std::string &path, const char *key);

/// "this runtime reads format versions 1 to 2, got <version>".
std::string formatVersionError(int64_t version);

/// Collects the first error of a check, as "<file>: <path>: <message>".
class ManifestChecker {
public:
  explicit ManifestChecker(std::string file) : file(std::move(file)) {}

  bool fail(const std::string &path, const std::string &message) {
    if (error.empty())
      error = file + ": " + (path.empty() ? "" : path + ": ") + message;
    return false;
  }
  const std::string &result() const { return error; }

private:
  std::string file;
  std::string error;
};

/// The semantic checks of `manifest`, which is read from or written to
/// `file` (errors name it). "" or the first error.
std::string checkManifest(const Manifest &manifest, const std::string &file);

/// The manifest as JSON, without the content hash.
nlohmann::json encodeManifest(const Manifest &manifest);

/// Decodes what is checked before the rest of `root` (a JSON object): the
/// "format", the "format_version" (both must be this runtime's) and the
/// content hash, as a string, into `storedHash`. False with the error in
/// `check`.
bool decodeManifestHeader(const nlohmann::json &root, ManifestChecker &check,
                          std::string &storedHash);

/// Decodes the manifest object `root` into `out`. False with the first type
/// error, at its JSON path, in `check`.
bool decodeManifest(const nlohmann::json &root, ManifestChecker &check,
                    Manifest &out);

/// "sha256:<hex>" over `withoutHash` (the manifest object without
/// content_hash) and the libraries in `dir`. "" or the error.
std::string computeContentHash(const nlohmann::json &withoutHash,
                               const Manifest &manifest, const std::string &dir,
                               std::string &hash);

/// Whether `text` is "sha256:" and 64 lower-case hex digits.
bool isContentHash(const std::string &text);

} // namespace dtensor::rt

#endif // DTENSOR_RUNTIME_FORMATS_MANIFESTINTERNALS_H
