// `dnsmoat password-hash` and `dnsmoat api-token`: the dashboard's password and the scripts'
// tokens, stored only as Argon2id hashes in [api] (docs/api.md).
#pragma once

#include <filesystem>
#include <optional>

namespace moat::app {

/// Reads a password (stdin: one line; a terminal: asked twice, not echoed) and prints its hash;
/// with `config_file` also writes it as [api] password_hash there. Returns the exit status.
int run_password_hash(const std::optional<std::filesystem::path>& config_file);

/// Makes a random API token, prints it once and its hash; with `config_file` adds the hash to
/// [api] token_hashes there. Returns the exit status.
int run_api_token(const std::optional<std::filesystem::path>& config_file);

}  // namespace moat::app
