// Verifies a runtime artifact (a multi-GB SQSH/SIF file) against its registry SHA-256.
// Hashing streams the file through OpenSSL EVP in fixed-size chunks, never loading it
// whole. A verified digest is cached by file identity (device, inode, size, mtime, ctime),
// so a repeat check of an unchanged file costs one stat(), not a re-read.
// Thread-safety: verify() may be called from several threads at once.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "common/result.h"

namespace tuneplane::catalog {

class ArtifactVerifier {
 public:
  ArtifactVerifier();
  ~ArtifactVerifier();
  ArtifactVerifier(const ArtifactVerifier&) = delete;
  ArtifactVerifier& operator=(const ArtifactVerifier&) = delete;

  // ok when `path` is a regular file whose SHA-256 is `expected_sha256` (hex, any case).
  // Errors: "artifact.missing", "artifact.not_regular_file", "artifact.unreadable",
  // "artifact.sha256_mismatch"; `field` is set to the given `field` argument.
  Status verify(const std::string& path, const std::string& expected_sha256,
                const std::string& field = "");

  // Told how far a full read has got: bytes hashed so far and the file's size. Not called
  // on a cache hit. Called on the verifying thread after each chunk; it must be cheap.
  using Progress = std::function<void(uint64_t done, uint64_t total)>;
  // The same, reporting progress while the file is read (for a progress bar).
  Status verify(const std::string& path, const std::string& expected_sha256,
                const std::string& field, const Progress& progress);

  // The file's SHA-256 as lower-case hex (cached the same way).
  Result<std::string> sha256Of(const std::string& path);

  // How many times a file was actually read (for tests and benchmarks of the cache).
  long long fullReads() const;

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace tuneplane::catalog
