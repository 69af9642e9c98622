# fish completion for outl (installed as share/fish/vendor_completions.d/outl.fish)
set -l commands show check daily status reconcile help version
complete -c outl -f
complete -c outl -l workspace -x -a '(__fish_complete_directories)' -d 'the workspace'
complete -c outl -l state-dir -x -a '(__fish_complete_directories)' -d 'device-local state'
complete -c outl -l json -d 'show, status: one JSON document'
complete -c outl -l help -d 'usage'
complete -c outl -l version -d 'version'
complete -c outl -n "not __fish_seen_subcommand_from $commands" -a show -d "print a day's journal from the op log"
complete -c outl -n "not __fish_seen_subcommand_from $commands" -a check -d 'check that journals/ and pages/ agree with the op log'
complete -c outl -n "not __fish_seen_subcommand_from $commands" -a daily -d "append one block to today's journal"
complete -c outl -n "not __fish_seen_subcommand_from $commands" -a status -d "every device's op log and every inbox"
complete -c outl -n "not __fish_seen_subcommand_from $commands" -a reconcile -d 'turn hand edits of page files into ops, then project'
complete -c outl -n "not __fish_seen_subcommand_from $commands" -a 'help version'
complete -c outl -n '__fish_seen_subcommand_from show' -a 'today yesterday tomorrow (date +%F)' -d 'day'
complete -c outl -n '__fish_seen_subcommand_from daily; and not __fish_seen_subcommand_from append' -a append
