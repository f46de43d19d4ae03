"""The HTML pages: `page` (the self-contained document, the blocks as HTML, writing the file)
and `svg` (the charts); `assets/` holds the style sheets and the script every page inlines."""
