# fish completion for outld (installed as share/fish/vendor_completions.d/outld.fish)
complete -c outld -f
complete -c outld -l workspace -x -a '(__fish_complete_directories)' -d 'the workspace'
complete -c outld -l inbox -x -a '(__fish_complete_directories)' -d 'drain this inbox too'
complete -c outld -l state-dir -x -a '(__fish_complete_directories)' -d 'device-local state'
complete -c outld -l log -x -a 'auto journal stderr' -d 'where to log'
complete -c outld -l io -x -a 'auto uring plain' -d 'how to do I/O'
complete -c outld -l once -d 'drain once and exit'
complete -c outld -l timeout -x -d 'with --once: seconds to wait for a running outld'
complete -c outld -s v -l verbose -d 'with --once: always print the summary'
complete -c outld -s h -l help -d 'usage'
complete -c outld -s V -l version -d 'version'
