#!/usr/bin/env sysbench
-- dbcompare's classic search run by sysbench: the same prepared statement on the same table
-- (dbcompare_records, as a classic run with --sizes small leaves it), keys drawn uniformly.
sysbench.cmdline.options = {
   records = {"Records of the size small (unique ids small-1 .. small-N)", 10000},
}

function thread_init()
   drv = sysbench.sql.driver()
   con = drv:connect()
   stmt = con:prepare("SELECT id, unique_id, created_by, updated_by, deleted_by, created_at, data "
                         .. "FROM dbcompare_records WHERE unique_id = ?")
   param = stmt:bind_create(sysbench.sql.type.VARCHAR, 32)
   stmt:bind_param(param)
end

function event()
   param:set("small-" .. sysbench.rand.uniform(1, sysbench.opt.records))
   stmt:execute()
end

function thread_done()
   stmt:close()
   con:disconnect()
end
