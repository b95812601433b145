// `tuneplane serve` over TLS, through the real process and the real CLI: the CLI verifies the
// server against TUNEPLANE_CA_FILE (and fails clearly without it), the console's page comes
// over https, SIGHUP loads a new certificate (seen by its fingerprint) and keeps the old one
// when the new files are bad, and plain HTTP on a non-loopback address is refused unless
// server.insecure_http says otherwise (then a warning). The certificates are made at test
// time by the `openssl` binary: nothing secret is committed.
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/socket.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "cli/commands.h"
#include "serve_fixture.h"
#include "staging/stager.h"
#include "support/raw_http_client.h"
#include "support/subprocess.h"

namespace tuneplane::api::testing {
namespace {

constexpr const char* kTlsToken = "tls-test-token";

// A self-signed certificate for 127.0.0.1 and its key, written to `dir`/cert.pem, key.pem.
bool makeCertificate(const std::string& dir, const std::string& name) {
  std::filesystem::create_directories(dir);
  const auto made =
      test::runProcess({"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                        "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2", "-subj",
                        "/CN=" + name, "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                        "-keyout", dir + "/key.pem", "-out", dir + "/cert.pem"},
                       {.scratch = dir});
  EXPECT_EQ(made.exit_code, 0) << made.err;
  return made.exit_code == 0;
}

std::string hex(const unsigned char* bytes, unsigned length) {
  std::string out;
  char pair[3];
  for (unsigned i = 0; i < length; ++i) {
    std::snprintf(pair, sizeof pair, "%02x", bytes[i]);
    out += pair;
  }
  return out;
}

std::string fingerprint(X509* cert) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned length = 0;
  if (cert == nullptr || X509_digest(cert, EVP_sha256(), digest, &length) != 1) return "";
  return hex(digest, length);
}

std::string fileFingerprint(const std::string& pem) {
  FILE* file = std::fopen(pem.c_str(), "r");
  if (file == nullptr) return "";
  X509* cert = PEM_read_X509(file, nullptr, nullptr, nullptr);
  std::fclose(file);
  const std::string out = fingerprint(cert);
  X509_free(cert);
  return out;
}

struct TlsExchange {
  std::string fingerprint;  // of the certificate the server presented; "" if no handshake
  std::string answer;
};

// A TLS connection (no verification: the test compares fingerprints), one request with
// Connection: close, the whole answer. Every read is bounded by SO_RCVTIMEO.
TlsExchange exchange(int port, const std::string& request) {
  TlsExchange out;
  test::RawHttpConnection c(port);
  if (!c.ok()) return out;
  timeval bound{20, 0};
  ::setsockopt(c.fd(), SOL_SOCKET, SO_RCVTIMEO, &bound, sizeof bound);
  SSL_CTX* context = SSL_CTX_new(TLS_client_method());
  SSL* ssl = SSL_new(context);
  SSL_set_fd(ssl, c.fd());
  if (SSL_connect(ssl) == 1) {
    X509* peer = SSL_get1_peer_certificate(ssl);
    out.fingerprint = fingerprint(peer);
    X509_free(peer);
    if (SSL_write(ssl, request.data(), static_cast<int>(request.size())) > 0) {
      char buffer[8192];
      for (int n; (n = SSL_read(ssl, buffer, sizeof buffer)) > 0;) out.answer.append(buffer, n);
    }
  }
  SSL_free(ssl);
  SSL_CTX_free(context);
  return out;
}

class ServeTlsTest : public ServeProcessFixture {
 protected:
  // serve with server.tls naming tls/cert.pem and tls/key.pem, relative to the site file.
  int startTls() {
    site_ = std::make_unique<SiteDir>(
        sim_->baseUrl(), false, "",
        "server:\n  poll_interval: 1s\n  tls:\n    cert: tls/cert.pem\n    key: tls/key.pem\n"
        "  tokens:\n    - user: alice\n      token_sha256: " +
            staging::sha256Hex(kTlsToken) + "\n");
    tls_dir_ = site_->dir() + "/tls";
    if (!makeCertificate(tls_dir_, "first")) return 0;
    startServe(*site_, {"--db", site_->dir() + "/tp.db"});
    const int port = waitForPort();
    EXPECT_GT(port, 0) << readFile(stderr_path_);
    EXPECT_NE(readFile(stderr_path_).find("listening on https://"), std::string::npos);
    return port;
  }

  test::ProcessResult cli(int port, const std::vector<std::string>& args, bool with_ca) {
    std::vector<std::string> env = {"PATH=/usr/bin:/bin", "HOME=" + site_->dir(),
                                    "TUNEPLANE_SERVER=https://127.0.0.1:" + std::to_string(port),
                                    std::string("TUNEPLANE_TOKEN=") + kTlsToken};
    if (with_ca) env.push_back("TUNEPLANE_CA_FILE=" + tls_dir_ + "/cert.pem");
    std::vector<std::string> argv = {kBinary};
    argv.insert(argv.end(), args.begin(), args.end());
    return test::runProcess(argv, {.scratch = site_->dir(), .env = env});
  }

  std::unique_ptr<SiteDir> site_;
  std::string tls_dir_;
};

TEST_F(ServeTlsTest, TheCliWorksOverHttpsWithTheCaFileAndFailsClearlyWithout) {
  const int port = startTls();
  ASSERT_GT(port, 0);
  const auto trusted = cli(port, {"whoami", "-o", "json"}, true);
  EXPECT_EQ(trusted.exit_code, 0) << trusted.err;
  EXPECT_NE(trusted.out.find("alice"), std::string::npos) << trusted.out;
  const auto untrusted = cli(port, {"whoami"}, false);
  EXPECT_EQ(untrusted.exit_code, cli::kExitServer) << untrusted.err;
  EXPECT_NE(untrusted.err.find("TUNEPLANE_CA_FILE"), std::string::npos) << untrusted.err;
  EXPECT_EQ(untrusted.err.find(kTlsToken), std::string::npos);
}

TEST_F(ServeTlsTest, TheConsoleIsServedOverHttps) {
  const int port = startTls();
  ASSERT_GT(port, 0);
  const auto page = exchange(port, "GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(test::RawHttpConnection::firstStatus(page.answer), 200) << page.answer;
  EXPECT_NE(page.answer.find("<html"), std::string::npos);
}

TEST_F(ServeTlsTest, SighupLoadsANewCertificateAndKeepsTheOldOneWhenTheNewIsBad) {
  const int port = startTls();
  ASSERT_GT(port, 0);
  const std::string request = "GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
  const std::string first = fileFingerprint(tls_dir_ + "/cert.pem");
  ASSERT_FALSE(first.empty());
  EXPECT_EQ(exchange(port, request).fingerprint, first);

  // A new pair, moved into place the way an operator's renewal would, then SIGHUP.
  ASSERT_TRUE(makeCertificate(tls_dir_ + "/next", "second"));
  std::filesystem::rename(tls_dir_ + "/next/key.pem", tls_dir_ + "/key.pem");
  std::filesystem::rename(tls_dir_ + "/next/cert.pem", tls_dir_ + "/cert.pem");
  const std::string second = fileFingerprint(tls_dir_ + "/cert.pem");
  ASSERT_NE(second, first);
  ASSERT_EQ(::kill(pid_, SIGHUP), 0);
  EXPECT_TRUE(tuneplane::test::waitUntil([&] {
    return exchange(port, request).fingerprint == second;
  })) << readFile(stderr_path_);

  // A broken certificate file: the reload fails, is logged, and the served one stays.
  pipeline::testing::writeFile(tls_dir_ + "/cert.pem", "not a certificate\n");
  ASSERT_EQ(::kill(pid_, SIGHUP), 0);
  EXPECT_TRUE(tuneplane::test::waitUntil([&] {
    const std::string log = readFile(stderr_path_);
    return log.find("reload refused") != std::string::npos &&
           log.find("cannot load the certificate chain") != std::string::npos;
  })) << readFile(stderr_path_);
  const auto after = exchange(port, request);
  EXPECT_EQ(after.fingerprint, second);
  EXPECT_EQ(test::RawHttpConnection::firstStatus(after.answer), 200);
}

TEST_F(ServeTlsTest, PlainHttpOnANonLoopbackAddressNeedsInsecureHttpAndWarns) {
  // 192.0.2.1 (TEST-NET-1) is no address of this host: nothing is ever exposed. Refused
  // before binding (exit 2); with insecure_http the check passes, serve warns, and only the
  // bind fails (exit 1).
  SiteDir refused(sim_->baseUrl(), false, "", "server:\n  listen: 192.0.2.1:0\n");
  startServe(refused, {"--db", refused.dir() + "/tp.db"}, "");
  EXPECT_EQ(waitForExit(20s), cli::kExitInvalid) << readFile(stderr_path_);
  EXPECT_NE(readFile(stderr_path_).find("server.insecure_listen"), std::string::npos)
      << readFile(stderr_path_);

  SiteDir allowed(sim_->baseUrl(), false, "",
                  "server:\n  listen: 192.0.2.1:0\n  insecure_http: true\n");
  startServe(allowed, {"--db", allowed.dir() + "/tp.db"}, "");
  EXPECT_EQ(waitForExit(20s), cli::kExitFailure) << readFile(stderr_path_);
  const std::string log = readFile(stderr_path_);
  EXPECT_NE(log.find("insecure_http"), std::string::npos) << log;
  EXPECT_NE(log.find("clear text"), std::string::npos) << log;
  EXPECT_EQ(log.find("server.insecure_listen"), std::string::npos) << log;
}

}  // namespace
}  // namespace tuneplane::api::testing
