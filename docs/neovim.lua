-- impact-ls for Neovim 0.11+ (vim.lsp.config / vim.lsp.enable).
-- Put this in your init.lua, or in ~/.config/nvim/plugin/impact_ls.lua.
-- Set vim.g.impact_ls_cmd to start the server some other way, e.g.
--   vim.g.impact_ls_cmd = { "/path/to/venv/bin/python", "-m", "impact_ls", "serve" }

local function on_attach(client, bufnr)
  -- Lenses are pulled: refresh them when the analysis changes (it always republishes
  -- diagnostics) and when you come back to a buffer.
  local group = vim.api.nvim_create_augroup("impact_ls_lenses_" .. bufnr, { clear = true })
  vim.api.nvim_create_autocmd({ "BufEnter", "InsertLeave", "DiagnosticChanged" }, {
    group = group,
    buffer = bufnr,
    callback = function()
      vim.lsp.codelens.refresh({ bufnr = bufnr })
    end,
  })
  vim.lsp.codelens.refresh({ bufnr = bufnr })

  local function map(lhs, rhs, desc)
    vim.keymap.set("n", lhs, rhs, { buffer = bufnr, desc = "impact-ls: " .. desc })
  end
  local function exec(command, arguments)
    client:exec_cmd({ title = command, command = command, arguments = arguments }, { bufnr = bufnr })
  end
  map("<leader>ib", function() exec("impact.showBlastRadius", { vim.uri_from_bufnr(bufnr) }) end,
    "blast radius of this buffer (quickfix)")
  map("<leader>iB", function() exec("impact.showBlastRadius", {}) end, "blast radius of the workspace")
  map("<leader>it", function() exec("impact.runAffectedTests", { { uri = vim.uri_from_bufnr(bufnr) } }) end,
    "run the affected tests")
  map("<leader>ir", function() exec("impact.reindex", {}) end, "re-index the workspace")
  map("<leader>il", vim.lsp.codelens.run, "run the lens on this line")
  map("<leader>in", function()
    vim.lsp.buf.code_action({
      apply = true,
      filter = function(action) return action.title:match("^Next edit") ~= nil end,
    })
  end, "go to the next edit")
end

-- Client-side commands: show lists in the quickfix window instead of asking the server.
local function to_quickfix(title, items)
  vim.fn.setqflist({}, " ", { title = title, items = items })
  vim.cmd("botright copen")
end

vim.lsp.commands["impact.showLocations"] = function(command)
  local locations = command.arguments[3] or {}
  to_quickfix(command.title, vim.lsp.util.locations_to_items(locations, "utf-16"))
end

vim.lsp.commands["impact.showBlastRadius"] = function(command, ctx)
  local client = assert(vim.lsp.get_client_by_id(ctx.client_id))
  local params = { command = command.command, arguments = command.arguments }
  client:request("workspace/executeCommand", params, function(err, report)
    if err or not report or not report.triage then
      vim.notify("impact-ls: " .. (err and err.message or "no report"), vim.log.levels.WARN)
      return
    end
    local root = client.root_dir or vim.fn.getcwd()
    local items = {}
    for bucket, kind in pairs({ must_inspect = "W", may_impact = "I" }) do
      for _, entry in ipairs(report.triage[bucket]) do
        table.insert(items, {
          filename = root .. "/" .. entry.file,
          lnum = entry.range[1][1],
          col = entry.range[1][2] + 1,
          type = kind,
          text = entry.reason,
        })
      end
    end
    table.sort(items, function(a, b) return a.type > b.type end)
    to_quickfix("impact-ls: blast radius", items)
  end, ctx.bufnr)
end

vim.lsp.config("impact_ls", {
  cmd = vim.g.impact_ls_cmd or { "impact-ls", "serve" },
  filetypes = { "python" },
  root_markers = { "pyproject.toml", "setup.cfg", "setup.py", ".git" },
  -- Any [tool.impact-ls] key, camelCase; these override the project's pyproject.toml.
  init_options = { impactLs = { maySeverity = "information" } },
  settings = { impactLs = {} },
  on_attach = on_attach,
})
vim.lsp.enable("impact_ls")
