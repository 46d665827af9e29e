"""``myrm bench``: replay recorded agent sessions through context strategies and measure them."""
