// A light document tree shared by the TOML and JSON readers, with the source line of every
// value and key, so one validator serves both syntaxes with exact locations.
//
// A Node owns its children by value. Tables keep their keys in file order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace moat::config::detail {

struct Node;

struct Field;

struct Node {
    enum class Kind : std::uint8_t {
        null,
        boolean,
        integer,
        floating,
        string,
        other,
        array,
        table
    };

    Kind kind = Kind::null;
    std::uint32_t line = 0;  ///< 1-based line of the value (of `[`/`{` for containers)
    bool boolean = false;
    std::int64_t integer = 0;
    double floating = 0;
    std::string text;           ///< the string value; for `other`, the TOML type (e.g. "date-time")
    std::vector<Node> items;    ///< array elements
    std::vector<Field> fields;  ///< table entries, in file order
};

struct Field {
    std::string key;
    std::uint32_t key_line = 0;
    Node value;
};

/// "a boolean", "an integer", ... for error messages.
const char* kind_name(Node::Kind kind) noexcept;

}  // namespace moat::config::detail
