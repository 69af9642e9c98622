(* mldoc-json: read Markdown (or Org) on stdin, print the JSON AST of
   [Mldoc.Parser.parse config input], exactly as Logseq's [parseJson]
   (mldoc js/lib.ml) does:  parse config str |> Type.blocks_to_yojson
   |> Yojson.Safe.to_string.

   Usage: mldoc-json [CONFIG_JSON] < input.md
   With no argument the config of Logseq's file graph for Markdown is used. *)

let default_config =
  {|{"toc":false,"parse_outline_only":false,"heading_number":false,"keep_line_break":true,"format":"Markdown","heading_to_list":false,"export_md_remove_options":[]}|}

let read_all ic =
  let buf = Buffer.create 65536 in
  let chunk = Bytes.create 65536 in
  let rec loop () =
    let n = input ic chunk 0 (Bytes.length chunk) in
    if n > 0 then (
      Buffer.add_subbytes buf chunk 0 n;
      loop ())
  in
  loop ();
  Buffer.contents buf

let () =
  set_binary_mode_in stdin true;
  set_binary_mode_out stdout true;
  let config_str =
    if Array.length Sys.argv > 1 then Sys.argv.(1) else default_config
  in
  let config_json =
    try Yojson.Safe.from_string config_str
    with Yojson.Json_error e ->
      prerr_endline ("Config error: " ^ e);
      exit 2
  in
  match Mldoc.Conf.of_yojson config_json with
  | Error e ->
    prerr_endline ("Config error: " ^ e);
    exit 2
  | Ok config -> (
    let input = read_all stdin in
    match Mldoc.Parser.parse config input with
    | ast ->
      print_string (Mldoc.Type.blocks_to_yojson ast |> Yojson.Safe.to_string);
      print_newline ()
    | exception error ->
      (* Logseq's parseJson prints the exception and returns the input. *)
      prerr_endline (Printexc.to_string error);
      exit 1)
