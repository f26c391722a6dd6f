//===- ManifestHash.cpp - The manifest's content hash ---------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The content hash seals an artifact: SHA-256 over the manifest's JSON
// without the hash, a zero byte, then the library's bytes and the reference
// library's, so that changing any of them after writing is detected.
//
//===----------------------------------------------------------------------===//

#include "ManifestInternals.h"
#include "Sha256.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

using json = nlohmann::json;

namespace dtensor::rt {

namespace {

constexpr const char *kHashPrefix = "sha256:";

/// Feeds the bytes of `path` to `sha`. "" or the error.
std::string hashFile(Sha256 &sha, const std::string &path) {
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    return "cannot open " + path + ": " + std::strerror(errno);
  std::vector<char> chunk(1 << 20);
  size_t got;
  while ((got = std::fread(chunk.data(), 1, chunk.size(), file)) > 0)
    sha.update(chunk.data(), got);
  bool failed = std::ferror(file);
  std::fclose(file);
  if (failed)
    return "cannot read " + path + ": " + std::strerror(errno);
  return "";
}

} // namespace

std::string computeContentHash(const json &withoutHash,
                               const Manifest &manifest, const std::string &dir,
                               std::string &hash) {
  Sha256 sha;
  std::string text = withoutHash.dump();
  sha.update(text.data(), text.size());
  const uint8_t separator = 0;
  sha.update(&separator, 1);
  if (std::string error = hashFile(sha, joinPath(dir, manifest.library));
      !error.empty())
    return error;
  if (!manifest.referenceLibrary.empty())
    if (std::string error =
            hashFile(sha, joinPath(dir, manifest.referenceLibrary));
        !error.empty())
      return error;
  hash = kHashPrefix + toHex(sha.finish());
  return "";
}

bool isContentHash(const std::string &text) {
  std::string prefix = kHashPrefix;
  if (text.size() != prefix.size() + 64 ||
      text.compare(0, prefix.size(), prefix) != 0)
    return false;
  for (size_t i = prefix.size(); i < text.size(); ++i)
    if (!std::isxdigit(static_cast<unsigned char>(text[i])) ||
        std::isupper(static_cast<unsigned char>(text[i])))
      return false;
  return true;
}

} // namespace dtensor::rt
