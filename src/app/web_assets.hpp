// The dashboard's files (src/app/web/), built into the binary by cmake/EmbedWebAssets.cmake.
#pragma once

#include <span>
#include <string_view>

namespace moat::app {

struct WebAsset {
    std::string_view path;  ///< "/index.html", "/app.js", ...
    std::string_view content_type;
    std::string_view body;
};

/// Every embedded file, sorted by path.
[[nodiscard]] std::span<const WebAsset> web_assets() noexcept;

}  // namespace moat::app
