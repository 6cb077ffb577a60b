#include "config_store.hpp"

#include <fstream>
#include <sstream>

#include "moat/config/loader.hpp"

namespace moat::app {
namespace {

EditFailure no_file() {
    return {409,
            "dnsmoat runs on its embedded defaults: start it with --config FILE to change "
            "settings from the API"};
}

}  // namespace

tl::expected<std::string, EditFailure> ConfigStore::read_text() const {
    if (!file_) {
        return tl::unexpected(no_file());
    }
    std::ifstream in(*file_, std::ios::binary);
    if (!in) {
        return tl::unexpected(EditFailure{500, "cannot read " + file_->string()});
    }
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

tl::expected<void, EditFailure> ConfigStore::replace(std::string_view text) const {
    if (!file_) {
        return tl::unexpected(no_file());
    }
    const auto syntax = config::syntax_of(*file_);
    if (!syntax) {
        return tl::unexpected(EditFailure{500, syntax.error().message});
    }
    if (auto checked = config::parse(text, *syntax, file_->string()); !checked) {
        return tl::unexpected(EditFailure{400, config::to_string(checked.error())});
    }
    if (auto written = config::write_file_atomically(*file_, text, true); !written) {
        return tl::unexpected(EditFailure{500, written.error()});
    }
    return {};
}

tl::expected<void, EditFailure> ConfigStore::edit(const Change& change) const {
    auto text = read_text();
    if (!text) {
        return tl::unexpected(text.error());
    }
    const auto syntax = config::syntax_of(*file_);
    if (!syntax) {
        return tl::unexpected(EditFailure{500, syntax.error().message});
    }
    auto doc = config::read_document(*text, *syntax, file_->string());
    if (!doc) {
        // The file on disk is broken (a hand edit in progress?): change nothing.
        return tl::unexpected(EditFailure{409, "the config file does not load, fix it first:\n" +
                                                   config::to_string(doc.error())});
    }
    const config::Document before = *doc;
    if (auto failed = change(*doc)) {
        return tl::unexpected(*failed);
    }
    // Comments are collected from the text as it was, before the change: they go back above
    // the lines they described, an entry's with the entry wherever the change moved it.
    const config::TomlComments comments = *syntax == config::Syntax::toml
                                              ? config::collect_toml_comments(*text)
                                              : config::TomlComments{};
    return replace(config::render_document(*doc, *syntax, &comments, &before));
}

}  // namespace moat::app
