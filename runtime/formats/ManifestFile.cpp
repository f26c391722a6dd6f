//===- ManifestFile.cpp - Reading and writing manifest.json ---------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Writing checks the manifest, encodes it, seals it with the content hash
// and renames a temporary file into place. Reading parses the file, decodes
// the format and version first, then the rest, runs the semantic checks,
// then compares the content hash.
//
//===----------------------------------------------------------------------===//

#include "AtomicFile.h"
#include "JsonText.h"
#include "ManifestInternals.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

using json = nlohmann::json;

namespace dtensor::rt {

std::string joinPath(const std::string &dir, const std::string &name) {
  if (dir.empty())
    return name;
  if (dir.back() == '/')
    return dir + name;
  return dir + "/" + name;
}

std::string writeManifest(const Manifest &manifest, const std::string &dir) {
  const std::string path = joinPath(dir, kManifestFileName);
  if (std::string error = checkManifest(manifest, path); !error.empty())
    return error;
  std::string text;
  try {
    json root = encodeManifest(manifest);
    std::string hash;
    if (std::string error = computeContentHash(root, manifest, dir, hash);
        !error.empty())
      return path + ": " + error;
    root[kContentHashKey] = hash;
    text = root.dump(2) + "\n";
  } catch (const json::exception &e) {
    return path + ": cannot serialize the manifest (" + e.what() + ")";
  }

  return writeFileAtomically(path, [&](const WriteBytesFn &write) {
    return write(text.data(), text.size());
  });
}

std::string readManifest(const std::string &dir, Manifest &manifest) {
  const std::string path = joinPath(dir, kManifestFileName);
  std::ifstream stream(path, std::ios::binary);
  if (!stream)
    return "cannot open " + path + ": " + std::strerror(errno);
  std::stringstream contents;
  contents << stream.rdbuf();
  if (stream.bad())
    return "cannot read " + path;

  json root = json::parse(contents.str(), /*cb=*/nullptr,
                          /*allow_exceptions=*/false);
  if (root.is_discarded())
    return path + ": not valid JSON (truncated or malformed)";
  ManifestChecker check(path);
  if (!root.is_object()) {
    check.fail("", "expected a JSON object at the top level, got " +
                       describeJson(root));
    return check.result();
  }

  try {
    std::string storedHash;
    if (!decodeManifestHeader(root, check, storedHash))
      return check.result();
    if (!isContentHash(storedHash)) {
      check.fail(kContentHashKey,
                 "expected \"sha256:\" and 64 lower-case hex digits, got \"" +
                     storedHash + "\"");
      return check.result();
    }

    Manifest decoded;
    if (!decodeManifest(root, check, decoded))
      return check.result();
    if (std::string error = checkManifest(decoded, path); !error.empty())
      return error;

    json withoutHash = root;
    withoutHash.erase(kContentHashKey);
    std::string hash;
    if (std::string error = computeContentHash(withoutHash, decoded, dir, hash);
        !error.empty())
      return path + ": " + error;
    if (hash != storedHash)
      return path + ": content hash mismatch (the artifact was modified "
                    "after it was written)";
    manifest = std::move(decoded);
  } catch (const json::exception &e) {
    return path + ": cannot decode the manifest (" + e.what() + ")";
  }
  return "";
}

} // namespace dtensor::rt
