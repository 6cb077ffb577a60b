#include "secret_commands.hpp"

#include <termios.h>
#include <unistd.h>

#include <iostream>
#include <string>

#include "config_store.hpp"
#include "moat/api/password.hpp"

namespace moat::app {
namespace {

constexpr std::size_t kMinPassword = 8;

/// One line from stdin, echo off when it is a terminal.
std::optional<std::string> read_secret(const char* prompt) {
    const bool tty = ::isatty(STDIN_FILENO) == 1;
    termios old{};
    if (tty) {
        std::cerr << prompt << std::flush;
        ::tcgetattr(STDIN_FILENO, &old);
        termios quiet = old;
        quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
        ::tcsetattr(STDIN_FILENO, TCSANOW, &quiet);
    }
    std::string line;
    const bool got = static_cast<bool>(std::getline(std::cin, line));
    if (tty) {
        ::tcsetattr(STDIN_FILENO, TCSANOW, &old);
        std::cerr << "\n";
    }
    if (!got) {
        return std::nullopt;
    }
    if (!line.empty() && line.back() == '\r') {
        line.pop_back();
    }
    return line;
}

/// Writes `change` into the config file; 0 or 1 with the reason on stderr.
int write_into(const std::filesystem::path& file, const ConfigStore::Change& change,
               const char* what) {
    const ConfigStore store(file);
    if (auto edited = store.edit(change); !edited) {
        std::cerr << "dnsmoat: cannot write " << what << " into " << file.string() << ": "
                  << edited.error().error << "\n";
        return 1;
    }
    std::cerr << "written into " << file.string() << " (a running dnsmoat picks it up by itself)\n";
    return 0;
}

}  // namespace

int run_password_hash(const std::optional<std::filesystem::path>& config_file) {
    auto password = read_secret("New dashboard password: ");
    if (!password) {
        std::cerr << "dnsmoat: no password given on stdin\n";
        return 1;
    }
    if (::isatty(STDIN_FILENO) == 1) {
        auto again = read_secret("Again: ");
        if (!again || *again != *password) {
            std::cerr << "dnsmoat: the passwords differ\n";
            return 1;
        }
    }
    if (password->size() < kMinPassword) {
        std::cerr << "dnsmoat: a password needs at least " << kMinPassword << " characters\n";
        return 1;
    }
    auto hash = api::hash_secret(*password);
    if (!hash) {
        std::cerr << "dnsmoat: " << hash.error() << "\n";
        return 1;
    }
    std::cout << *hash << "\n";
    if (config_file) {
        return write_into(
            *config_file,
            [&](config::Document& doc) -> std::optional<EditFailure> {
                doc["api"]["password_hash"] = *hash;
                return std::nullopt;
            },
            "the password hash");
    }
    return 0;
}

int run_api_token(const std::optional<std::filesystem::path>& config_file) {
    const std::string token = api::random_hex(32);
    // A token is 256 random bits: no cost makes guessing it harder, and a light hash keeps its
    // one check on the event loop (the first time a token is seen) to a fraction of a millisecond.
    auto hash = api::hash_secret(token, api::kTokenCost);
    if (!hash) {
        std::cerr << "dnsmoat: " << hash.error() << "\n";
        return 1;
    }
    std::cout << "token: " << token << "\n"
              << "hash:  " << *hash << "\n";
    std::cerr << "Keep the token: only its hash is stored. Scripts send it as\n"
              << "  Authorization: Bearer " << token << "\n";
    if (config_file) {
        return write_into(
            *config_file,
            [&](config::Document& doc) -> std::optional<EditFailure> {
                config::Document& hashes = doc["api"]["token_hashes"];
                if (hashes.is_null()) {
                    hashes = config::Document::array();
                }
                hashes.push_back(*hash);
                return std::nullopt;
            },
            "the token's hash");
    }
    std::cerr << "Add the hash to [api] token_hashes in the config file.\n";
    return 0;
}

}  // namespace moat::app
