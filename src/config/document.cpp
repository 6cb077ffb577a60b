// Node tree → ordered JSON, and a TOML writer of our own: toml++ would sort the keys, and a file
// whose sections move about on every dashboard click is hard to read by hand.
#include "moat/config/document.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <optional>
#include <sstream>
#include <string_view>
#include <system_error>
#include <vector>

#include "entry_match.hpp"
#include "readers.hpp"
#include "toml_bare_key.hpp"

namespace moat::config {
namespace {

Document to_document(const detail::Node& n) {
    using Kind = detail::Node::Kind;
    switch (n.kind) {
        case Kind::null: return nullptr;
        case Kind::boolean: return n.boolean;
        case Kind::integer: return n.integer;
        case Kind::floating: return n.floating;
        case Kind::string:
        case Kind::other: return n.text;
        case Kind::array: {
            Document out = Document::array();
            for (const detail::Node& item : n.items) {
                out.push_back(to_document(item));
            }
            return out;
        }
        case Kind::table: {
            Document out = Document::object();
            for (const detail::Field& f : n.fields) {
                out[f.key] = to_document(f.value);
            }
            return out;
        }
    }
    return nullptr;
}

void put_string(std::ostream& out, std::string_view s) {
    out << '"';
    for (const char c : s) {
        switch (c) {
            case '"': out << "\\\""; break;
            case '\\': out << "\\\\"; break;
            case '\n': out << "\\n"; break;
            case '\t': out << "\\t"; break;
            case '\r': out << "\\r"; break;
            default:
                if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
                    std::array<char, 8> esc{};
                    std::snprintf(esc.data(), esc.size(), "\\u%04X", static_cast<unsigned char>(c));
                    out << esc.data();
                } else {
                    out << c;
                }
        }
    }
    out << '"';
}

void put_key(std::ostream& out, std::string_view key) {
    if (detail::is_bare_key(key)) {
        out << key;
    } else {
        put_string(out, key);
    }
}

std::string path_of(const std::string& prefix, const std::string& key) {
    std::ostringstream k;
    put_key(k, key);
    return prefix.empty() ? k.str() : prefix + "." + k.str();
}

void put_value(std::ostream& out, const Document& v) {
    if (v.is_string()) {
        put_string(out, v.get_ref<const std::string&>());
    } else if (v.is_boolean()) {
        out << (v.get<bool>() ? "true" : "false");
    } else if (v.is_number_integer()) {
        out << v.dump();
    } else if (v.is_number_float()) {
        const double d = v.get<double>();
        std::string text = v.dump();
        if (std::isfinite(d) && text.find_first_of(".eE") == std::string::npos) {
            text += ".0";  // TOML tells floats from integers by the point
        }
        out << text;
    } else if (v.is_array()) {
        out << '[';
        bool first = true;
        for (const Document& item : v) {
            if (item.is_null()) {
                continue;
            }
            out << (first ? "" : ", ");
            first = false;
            put_value(out, item);
        }
        out << ']';
    } else if (v.is_object()) {
        out << '{';
        bool first = true;
        for (const auto& [key, item] : v.items()) {
            if (item.is_null()) {
                continue;
            }
            out << (first ? " " : ", ");
            first = false;
            put_key(out, key);
            out << " = ";
            put_value(out, item);
        }
        out << (first ? "}" : " }");
    }
}

bool is_table_array(const Document& v) {
    if (!v.is_array() || v.empty()) {
        return false;
    }
    for (const Document& item : v) {
        if (!item.is_object()) {
            return false;
        }
    }
    return true;
}

/// The comment block a line had above it in the old file, or null.
const std::string* comments_above(const TomlComments* comments, const std::string& place) {
    if (comments == nullptr) {
        return nullptr;
    }
    const auto it = comments->above.find(place);
    return it == comments->above.end() ? nullptr : &it->second;
}

/// Writes the comment block a line had above it in the old file, if it had one; true if so.
bool put_comments(std::ostream& out, const TomlComments* comments, const std::string& place) {
    const std::string* block = comments_above(comments, place);
    if (block == nullptr) {
        return false;
    }
    out << *block;
    return true;
}

bool starts_with_blank_line(std::string_view block) {
    const std::size_t first = block.find_first_not_of(" \t");
    return first == std::string_view::npos || block[first] == '\n' || block[first] == '\r';
}

/// `table`'s value under `key`, or null.
const Document* member(const Document* table, const std::string& key) {
    if (table == nullptr || !table->is_object()) {
        return nullptr;
    }
    const auto it = table->find(key);
    return it == table->end() ? nullptr : &*it;
}

/// A table's keys, then its tables and arrays of tables. `prefix` is its TOML path, `place` its
/// place for the old file's comments (toml_comments.hpp), which tells entries of arrays apart.
/// `before` is the same table before the change, or null: with it, an entry of an array of
/// tables takes the place of the old entry it continues, so its comments follow it.
void put_table(std::ostream& out, const Document& table, const std::string& prefix,
               const TomlPlace& place, const TomlComments* comments, const Document* before) {
    for (const auto& [key, v] : table.items()) {
        if (v.is_null() || v.is_object() || is_table_array(v)) {
            continue;
        }
        put_comments(out, comments, place.key(key).as_key_line());
        put_key(out, key);
        out << " = ";
        put_value(out, v);
        out << '\n';
    }
    for (const auto& [key, v] : table.items()) {
        if (v.is_object()) {
            const TomlPlace sub = place.key(key);
            // A table the file wrote inline (`k = { ... }`) had its block above its key line.
            if (!put_comments(out, comments, sub.as_table_header()) &&
                !put_comments(out, comments, sub.as_key_line())) {
                out << '\n';
            }
            out << "[" << path_of(prefix, key) << "]\n";
            put_table(out, v, path_of(prefix, key), sub, comments, member(before, key));
        } else if (is_table_array(v)) {
            const Document* const old = member(before, key);
            const bool has_old = old != nullptr && is_table_array(*old);
            const auto match = has_old ? detail::match_entries(*old, v)
                                       : std::vector<std::optional<std::size_t>>{};
            for (std::size_t n = 0; n < v.size(); ++n) {
                // Without the tree before the change, entries keep the blocks of their positions.
                std::size_t at = n;
                const Document* old_item = nullptr;
                bool was_first = false;
                if (before != nullptr) {
                    if (has_old && match[n]) {
                        at = *match[n];
                        old_item = &(*old)[at];
                        was_first = at == 0;
                    } else {
                        at = (has_old ? old->size() : 0) + n;  // added: no old block is its
                    }
                }
                // The array's first entry, once others come before it, gets a blank line above
                // its block if the block has none (at the top of a file it needed none), so it
                // does not stick to the end of the entry now above it. Other blocks are written
                // as they were: without a blank line where the file had none.
                const bool first_now_follows = was_first && n > 0;
                const TomlPlace entry = place.key(key).entry(at);
                if (const std::string* block = comments_above(comments, entry.as_array_header())) {
                    if (first_now_follows && !starts_with_blank_line(*block)) {
                        out << '\n';
                    }
                    out << *block;
                } else {
                    out << '\n';
                }
                out << "[[" << path_of(prefix, key) << "]]\n";
                put_table(out, v[n], path_of(prefix, key), entry, comments, old_item);
            }
        }
    }
}

std::string errno_text(const std::string& what, const std::filesystem::path& path) {
    return what + " " + path.string() + ": " + std::generic_category().message(errno);
}

}  // namespace

tl::expected<Document, ConfigErrors> read_document(std::string_view text, Syntax syntax,
                                                   std::string_view file_name) {
    auto root = syntax == Syntax::toml ? detail::read_toml(text, file_name)
                                       : detail::read_json(text, file_name);
    if (!root) {
        return tl::unexpected(std::move(root.error()));
    }
    return to_document(*root);
}

std::string render_document(const Document& document, Syntax syntax, const TomlComments* comments,
                            const Document* before) {
    if (syntax == Syntax::json) {
        return document.dump(2) + "\n";
    }
    std::ostringstream out;
    put_table(out, document, "", TomlPlace{}, comments, before);
    std::string text = out.str();
    if (!text.empty() && text.front() == '\n') {
        text.erase(0, 1);  // the separator before a first table
    }
    if (comments != nullptr) {
        text = comments->at_start + text + comments->at_end;
    }
    return text;
}

tl::expected<void, std::string> write_file_atomically(const std::filesystem::path& path,
                                                      std::string_view text, bool keep_backup) {
    const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
    const std::filesystem::path temp = path.string() + ".tmp";
    mode_t mode = 0640;
    struct stat old {};
    const bool existed = ::stat(path.c_str(), &old) == 0;
    if (existed) {
        mode = old.st_mode & 07777;
    }
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0) {
        return tl::unexpected(errno_text("cannot create", temp));
    }
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            const std::string error = errno_text("cannot write", temp);
            ::close(fd);
            ::unlink(temp.c_str());
            return tl::unexpected(error);
        }
        done += static_cast<std::size_t>(n);
    }
    if (existed && (old.st_uid != ::geteuid() || old.st_gid != ::getegid())) {
        // Root editing the service's file (`sudo dnsmoat password-hash --config ...`) must
        // leave it to its owner and group, or the daemon could not read it any more. Others
        // cannot give a file away; their copy stays theirs, as the rename makes it anyway.
        (void)::fchown(fd, old.st_uid, old.st_gid);
    }
    if (::fchmod(fd, mode) != 0 || ::fsync(fd) != 0) {
        const std::string error = errno_text("cannot sync", temp);
        ::close(fd);
        ::unlink(temp.c_str());
        return tl::unexpected(error);
    }
    ::close(fd);
    if (existed && keep_backup) {
        const std::filesystem::path backup = path.string() + ".bak";
        ::unlink(backup.c_str());
        if (::link(path.c_str(), backup.c_str()) != 0) {
            const std::string error = errno_text("cannot keep the old file as", backup);
            ::unlink(temp.c_str());
            return tl::unexpected(error);
        }
    }
    if (::rename(temp.c_str(), path.c_str()) != 0) {
        const std::string error = errno_text("cannot replace", path);
        ::unlink(temp.c_str());
        return tl::unexpected(error);
    }
    if (const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
        ::fsync(dfd);  // the rename itself survives a power cut
        ::close(dfd);
    }
    return {};
}

}  // namespace moat::config
