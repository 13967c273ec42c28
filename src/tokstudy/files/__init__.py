"""Files as the library reads and writes them: line files plain or gzip (``lines``), arrays
on disk (``disk_array``), tab-separated and Markdown tables (``tsv``, ``markdown``), the
command-line tools' output paths (``output_paths``) and a refused write as one line
(``write_errors``)."""
