{{ config(materialized='table', file_format='parquet') }}

select
    cast(customer_id as bigint) as customer_id,
    cast(name as string) as name,
    cast(order_count as bigint) as order_count
from {{ ref('customer_totals') }}
